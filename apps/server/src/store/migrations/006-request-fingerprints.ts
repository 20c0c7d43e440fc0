import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * `idempotency_keys.fingerprint`: what the request that claimed a key asked for (kind, campaign,
 * placement, country, device), so that the key sent again with a different request is refused
 * instead of being stored as a duplicate of the first (D9). Keys claimed before this migration have
 * none and match any request until they expire, 24 hours later: the behaviour they were given.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('fingerprint', 'text').execute();
}
