import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Requests refused because a valid key came with browser signals (partner API 1.5): how many and the
 * latest, per key, beside "last used", so operators see which keys have leaked into client code.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('api_key_usage')
    .addColumn('browser_requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('api_key_usage').addColumn('last_browser_request_at', 'bigint').execute();
}
