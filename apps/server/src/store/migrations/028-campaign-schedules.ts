import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Dayparting: `campaigns.schedule`, the hours of the week a campaign may run in its time zone, as
 * the JSON of the management API (`{"mon": [[9, 17]]}`); null runs at every hour, as every campaign
 * did before. A nullable column without a default rewrites no row on either engine.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('campaigns').addColumn('schedule', 'text').execute();
}
