import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

const COLUMNS = `minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason,
  count, spend_micros, earnings_micros`;

/**
 * Rollups as a report sees them: `event_rollups_live`, a view every reader of per-minute rollups
 * goes through.
 *
 * SQLite: a batch no longer adds to `event_rollups` row by row. Each of its rows sits somewhere in
 * the minute's part of the table, so a batch of 34 events rewrote about 20 pages of it, more than
 * a third of all it wrote (docs/benchmarks.md). It appends its rollup rows to
 * `event_rollup_deltas` instead (no key, no index: a batch's rows fill one or two pages), and a
 * fold (`EventLedger.foldAppended`, every second and when the server stops) sums them into
 * `event_rollups` and empties it. The view is both tables, so a report counts an event from the
 * moment its request is answered, folded or not; every reader sums, so a key in both is exact.
 *
 * PostgreSQL: its batches upsert all their rollups in one statement; the view is the table.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') {
    await sql`create view event_rollups_live as select ${sql.raw(COLUMNS)} from event_rollups`.execute(db);
    return;
  }
  // The same columns as `event_rollups`, without its key or any index: rows are only appended
  // whole, then summed and deleted by the fold.
  await sql`create table event_rollup_deltas as select ${sql.raw(COLUMNS)} from event_rollups where false`.execute(
    db,
  );
  await sql`create view event_rollups_live as
    select ${sql.raw(COLUMNS)} from event_rollups
    union all
    select ${sql.raw(COLUMNS)} from event_rollup_deltas`.execute(db);
}
