import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The rollups' columns as reports read them, now with `with_viewer` (a migration keeps its own copy). */
const COLUMNS = `minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason,
  count, spend_micros, earnings_micros, with_viewer`;

/**
 * Frequency caps (D20).
 *
 * - `campaigns.frequency_caps`: a JSON array of `{ impressions, per }` ('[]': none, as every
 *   campaign had before). What viewers were shown is never stored here: it lives in memory or
 *   Redis, as long as a cap's window.
 * - `with_viewer` in the rollups (`event_rollups`, SQLite's `event_rollup_deltas`,
 *   `campaign_rollups`, and the view every reader sums): how many of the row's events named a
 *   viewer, so reports show the share of a campaign's impressions its caps could count. Only a
 *   count: nothing of the viewer is kept with an event.
 *
 * Constant defaults rewrite no row on either engine; the view is made again with the new column.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema
    .alterTable('campaigns')
    .addColumn('frequency_caps', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  const tables = [
    'event_rollups',
    'campaign_rollups',
    ...(engine === 'sqlite' ? ['event_rollup_deltas'] : []),
  ];
  for (const table of tables)
    await db.schema
      .alterTable(table)
      .addColumn('with_viewer', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  await sql`drop view event_rollups_live`.execute(db);
  if (engine === 'postgres') {
    await sql`create view event_rollups_live as select ${sql.raw(COLUMNS)} from event_rollups`.execute(db);
    return;
  }
  await sql`create view event_rollups_live as
    select ${sql.raw(COLUMNS)} from event_rollups
    union all
    select ${sql.raw(COLUMNS)} from event_rollup_deltas`.execute(db);
}
