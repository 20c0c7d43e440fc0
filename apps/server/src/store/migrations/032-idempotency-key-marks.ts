import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The marks made of the keys already stored: one per ten minutes of their times. */
const MARK_SLOT_MS = 10 * 60_000;

/**
 * SQLite: idempotency keys lose their `created_at` index, whose growth at its end rewrote three or
 * four pages in every batch's commit (docs/benchmarks.md); retention finds expired keys in rowid
 * order under `idempotency_key_marks` instead (`idempotency-marks-sqlite.ts`): each row a time and
 * the largest rowid at that time, so every key up to that rowid was created at or before it.
 *
 * The keys already stored get marks of their own, so they are forgotten within a day of their 24
 * hours at worst (one taken over in place by an earlier release holds back the keys after it until
 * it expires itself), and nearly all of them on time: walking the
 * table in rowid order, the newest `created_at` so far is a time every key up to there was created
 * at or before; the last rowid of each ten minutes of those times is a mark. In one transaction
 * (Kysely runs SQLite's migrations outside one). The previous release would find expired keys by
 * reading the whole table: SQLite serves from one instance, which migrates as it starts.
 *
 * PostgreSQL: nothing (its retention reads the index, and its batches write in parallel).
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') return;
  await db.transaction().execute(async (tx) => {
    await sql`create table idempotency_key_marks (at bigint not null, last_rowid bigint not null)`.execute(
      tx,
    );
    await sql`insert into idempotency_key_marks (at, last_rowid)
      select max(newest), max(id) from (
        select rowid as id, max(created_at) over (order by rowid) as newest from idempotency_keys
      ) group by newest / ${sql.lit(MARK_SLOT_MS)}`.execute(tx);
    await sql`drop index idempotency_keys_created`.execute(tx);
  });
}
