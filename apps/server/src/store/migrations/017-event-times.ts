import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Event times (D15): `events.event_at`, when the partner says the event happened (`occurredAt`,
 * ms), null when it did not say; `occurred_at` stays the receipt time, which partitions, rollups,
 * reports and retention keep counting on. A nullable column without a default rewrites no row on
 * either engine; on PostgreSQL, added to the partitioned table, it reaches every daily partition.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('events').addColumn('event_at', 'bigint').execute();
}
