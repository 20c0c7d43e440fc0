import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Pacing (D16): `campaigns.pacing`, `asap` (as every campaign delivered before) or `even`. Adding
 * the column rewrites no row on either engine (a constant default). Every instance asks for the
 * running even campaigns every pacing step: `campaigns_pacing` finds them without reading the
 * other campaigns.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('campaigns')
    .addColumn('pacing', 'text', (c) => c.notNull().defaultTo('asap'))
    .execute();
  await db.schema.createIndex('campaigns_pacing').on('campaigns').columns(['pacing', 'status']).execute();
}
