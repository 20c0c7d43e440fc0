import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Partners' blocked advertisers: a JSON array of advertiser ids beside `blocked_categories`, on the
 * watched `partners` table, so a change reloads every instance's live keys as a category block does.
 * Advertisers are never deleted, so an id stays meaningful. Added with a default: the previous
 * release keeps reading and writing partners as before.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('partners')
    .addColumn('blocked_advertisers', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
}
