import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Admin tokens get the lifecycle of partner keys: an optional expiry, and when each was last used,
 * so operators can tell a forgotten token from one in use before revoking it.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('admin_tokens').addColumn('expires_at', 'bigint').execute();
  await db.schema.alterTable('admin_tokens').addColumn('last_used_at', 'bigint').execute();
}
