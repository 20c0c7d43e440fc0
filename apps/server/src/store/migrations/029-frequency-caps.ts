import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Frequency caps (D20): `campaigns.frequency_caps`, a JSON array of `{ impressions, per }` ('[]':
 * none, as every campaign had before). A constant default rewrites no row on either engine. What
 * viewers were shown is never stored here: it lives in memory or Redis, as long as a cap's window.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('campaigns')
    .addColumn('frequency_caps', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}
