import type { Connection, Engine } from './connect.js';
import type { EventLedger } from './event-ledger.js';
import { postgresLedger } from './event-ledger-postgres.js';
import { sqliteLedger } from './event-ledger-sqlite.js';
import type { PageRequest } from './rows.js';
import type { Db } from './schema.js';

/**
 * What every module of the store works with: the database, or the transaction it runs in, the
 * engine, and the event ledger of that engine (chosen once, when the store is opened).
 */
export interface StoreContext {
  readonly db: Db;
  readonly engine: Engine;
  readonly ledger: EventLedger;
}

/** The context of a newly opened connection. */
export function openContext(connection: Connection): StoreContext {
  const ledger =
    connection.engine === 'sqlite' ? sqliteLedger(connection.sqlite ?? missingHandle()) : postgresLedger;
  return { db: connection.db, engine: connection.engine, ledger };
}

function missingHandle(): never {
  throw new Error('this SQLite store has no database handle');
}

/** Runs `body` in one transaction; inside a transaction it simply joins it. */
export function transact<T>(ctx: StoreContext, body: (tx: StoreContext) => Promise<T>): Promise<T> {
  if (ctx.db.isTransaction) return body(ctx);
  return ctx.db.transaction().execute((db) => body({ ...ctx, db }));
}

export const DEFAULT_PAGE = 50;

export function page<T extends { where: (...args: never[]) => T }>(
  query: T,
  request: PageRequest,
  idColumn: string,
): T {
  // Typed loosely on purpose: every paged table has a numeric `id` column, which Kysely's types
  // cannot say of a generic query.
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
  let q = query as any;
  const newestFirst = request.newestFirst === true;
  if (request.after !== undefined) q = q.where(idColumn, newestFirst ? '<' : '>', request.after);
  return q.orderBy(idColumn, newestFirst ? 'desc' : 'asc').limit(request.limit ?? DEFAULT_PAGE);
  /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
}
