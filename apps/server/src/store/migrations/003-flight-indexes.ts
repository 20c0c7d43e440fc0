import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Indexes for the lifecycle job, which asks every refresh interval which campaigns are due to start
 * or end: without them that question scans every campaign.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('campaigns_status_start')
    .on('campaigns')
    .columns(['status', 'start_at'])
    .execute();
  await db.schema.createIndex('campaigns_status_end').on('campaigns').columns(['status', 'end_at']).execute();
}
