import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Admin tokens get a role, as people have (D13): with `scope` (the operator, or one advertiser or
 * partner) it says what a script holding the token may see and do. Existing tokens stay operator
 * admins.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('admin_tokens')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('admin'))
    .execute();
}
