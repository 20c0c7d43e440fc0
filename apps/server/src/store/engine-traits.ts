/**
 * What differs between the two engines outside the event ledger's batch writes: how many commits
 * may run at once, how a transaction keeps other writers out while it reads what it will write
 * on, and where the catalogue lists tables. SQLite has one writer at a time (a transaction holds
 * the whole database, and every statement of a process runs on its one connection), so it needs
 * no lock of its own; PostgreSQL runs transactions side by side and takes the locks itself. The
 * store picks one set when it is opened (`context.ts`), so no other module asks which engine it
 * runs on: `test/engine-branches.test.ts` reads the source for such a question, and
 * `test/engine-traits.contract.test.ts` holds each engine to what each trait promises.
 */
import { sql } from 'kysely';
import type { Engine } from './connect.js';
import type { Db } from './schema.js';

/** A query that can lock the rows it reads until its transaction ends (Kysely's `SELECT`). */
export interface RowLockable<Q> {
  forUpdate(): Q;
}

/** The tables a transaction may keep writers out of (`lockAgainstWrites`). */
export type WriteLockedTable = 'event_rollups';

export interface EngineTraits {
  /**
   * Most group-commit batches committing at once. SQLite: 1 (one writer, and its commits block the
   * thread). PostgreSQL: 4, since a commit waits on the network and the server's fsync, and a few
   * transactions in flight keep it busy; batches take their row locks in a fixed order (see the
   * event ledger), so concurrent batches wait for each other but never deadlock.
   */
  readonly commitConcurrency: number;
  /**
   * `query`, made to lock the rows it reads until the transaction ends (`FOR UPDATE`), so that
   * another transaction reading them the same way waits for this one. Run inside a transaction.
   */
  lockRows<Q extends RowLockable<Q>>(query: Q): Q;
  /**
   * Keeps every other transaction from writing `table` until this one ends (reads go on): a write
   * then commits either before (and this transaction sees it) or after (and sees what this one
   * wrote). Run inside a transaction, before reading.
   */
  lockAgainstWrites(db: Db, table: WriteLockedTable): Promise<void>;
  /** Whether the store has a table (or partitioned table) of this name, visible on its path. */
  hasTable(db: Db, name: string): Promise<boolean>;
}

/** SQLite: one writer at a time, whose transaction already holds every row and table. */
export const sqliteTraits: EngineTraits = {
  commitConcurrency: 1,
  lockRows: (query) => query,
  lockAgainstWrites: () => Promise.resolve(),
  hasTable: async (db, name) => {
    const { rows } = await sql<{ found: number }>`select count(*) as found from sqlite_master
      where type = 'table' and name = ${name}`.execute(db);
    return Number(rows[0]?.found ?? 0) > 0;
  },
};

/** PostgreSQL: transactions run side by side, so each takes the locks it relies on. */
export const postgresTraits: EngineTraits = {
  commitConcurrency: 4,
  lockRows: (query) => query.forUpdate(),
  lockAgainstWrites: async (db, table) => {
    // SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE lock every insert, update and delete
    // takes, and with itself (two compactions queue), but not with readers.
    await sql`lock table ${sql.table(table)} in share row exclusive mode`.execute(db);
  },
  hasTable: async (db, name) => {
    const { rows } = await sql<{ found: number }>`select count(*) as found from pg_class
      where relname = ${name} and relkind in ('r', 'p') and pg_table_is_visible(oid)`.execute(db);
    return Number(rows[0]?.found ?? 0) > 0;
  },
};

/** Each engine's traits; a new engine does not compile until it has its own. */
export const ENGINE_TRAITS: { readonly [E in Engine]: EngineTraits } = {
  sqlite: sqliteTraits,
  postgres: postgresTraits,
};
