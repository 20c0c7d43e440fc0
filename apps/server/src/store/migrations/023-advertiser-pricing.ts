import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Who sets the prices of an advertiser's campaigns (D18): `advertisers.pricing`, 'operator' (the
 * operator alone, what every advertiser had before) or 'advertiser' (its own people too). A column
 * with a default, so the previous release reads and writes advertisers as before.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('advertisers')
    .addColumn('pricing', 'text', (c) => c.notNull().defaultTo('operator'))
    .execute();
}
