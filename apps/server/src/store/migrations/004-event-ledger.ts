import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The dimensions of a rollup row, in primary-key order (a migration keeps its own copy). */
const ROLLUP_KEY = [
  'minute',
  'campaign_id',
  'partner_id',
  'placement_id',
  'country',
  'device',
  'kind',
  'verdict',
] as const;

/**
 * What makes reports exact and retries safe (D9, D10):
 * - `events.idempotency_key`: the partner's `Idempotency-Key`, kept with the raw event so an audit
 *   (and the crash test) can tie every acknowledged request to exactly one stored event.
 * - `idempotency_keys`: one row per (API key, Idempotency-Key) first seen in the last 24 hours; a
 *   later request with the same pair is stored as a `duplicate`. The primary key makes the check
 *   race-free across batches and instances.
 * - `event_rollups`: per-minute counters by every report dimension and verdict, updated in the
 *   same transaction as the raw events. Absent country or device is stored as '' so the primary
 *   key needs no NULLs; it starts with the minute, which is how every report reads them. Rollups
 *   outlive raw events (retention prunes only `events`).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('events').addColumn('idempotency_key', 'text').execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('api_key_id', 'bigint', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_created')
    .on('idempotency_keys')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('event_rollups')
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('campaign_id', 'bigint', (c) => c.notNull())
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('placement_id', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('device', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_rollups_pk', [...ROLLUP_KEY])
    .execute();
  // Reports read rollups, and caps read counters, so raw events no longer need an index by
  // campaign; each index costs random page writes in every batch's commit.
  await db.schema.dropIndex('events_campaign').execute();

  // Events recorded before this migration get their rollups now, so reports cover them too.
  await db
    .insertInto('event_rollups')
    .columns([...ROLLUP_KEY, 'count'])
    .expression((eb) =>
      eb
        .selectFrom('events')
        .select((s) => [
          s.parens(s('occurred_at', '-', s.parens(s('occurred_at', '%', 60_000)))).as('minute'),
          'campaign_id',
          'partner_id',
          'placement_id',
          s.fn.coalesce('country', s.val('')).as('country'),
          s.fn.coalesce('device', s.val('')).as('device'),
          'kind',
          'verdict',
          s.fn.countAll().as('count'),
        ])
        .groupBy([...ROLLUP_KEY]),
    )
    .execute();
}
