import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The dimensions of a rollup row, in primary-key order, now with the reason (a migration keeps its own copy). */
const ROLLUP_KEY = [
  'minute',
  'campaign_id',
  'partner_id',
  'placement_id',
  'country',
  'device',
  'kind',
  'verdict',
  'reason',
] as const;

/** Every duplicate stored before this migration was an idempotent replay (D9). */
const REPLAY = 'idempotent replay';

/**
 * Measurement integrity (D15):
 * - `event_rollups.reason`: rollups count events by reason as well as verdict, so reports can group
 *   and filter by it. '' is no reason (a `counted` event), as '' is an absent country or device.
 *   The primary key gains the column. PostgreSQL swaps the key in place; SQLite cannot change a
 *   table's key, so the table is rebuilt and any other index on it recreated from its definition.
 * - `events.user_address`: the end user's address as the partner forwarded it, truncated to its
 *   IPv4 /24 or IPv6 /48 before it is stored; null when not sent.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema.alterTable('events').addColumn('user_address', 'text').execute();

  if (engine === 'postgres') {
    await db.schema
      .alterTable('event_rollups')
      .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db
      .updateTable('event_rollups')
      .set({ reason: REPLAY })
      .where('verdict', '=', 'duplicate')
      .execute();
    await db.schema.alterTable('event_rollups').dropConstraint('event_rollups_pk').execute();
    await db.schema
      .alterTable('event_rollups')
      .addPrimaryKeyConstraint('event_rollups_pk', [...ROLLUP_KEY])
      .execute();
    return;
  }

  const { rows: indexes } = await sql<{ sql: string }>`select sql from sqlite_master
    where type = 'index' and tbl_name = 'event_rollups' and sql is not null`.execute(db);
  await db.schema
    .createTable('event_rollups_012')
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('campaign_id', 'bigint', (c) => c.notNull())
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('placement_id', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('device', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_rollups_pk', [...ROLLUP_KEY])
    .execute();
  await sql`insert into event_rollups_012 (minute, campaign_id, partner_id, placement_id, country, device,
      kind, verdict, reason, count)
    select minute, campaign_id, partner_id, placement_id, country, device, kind, verdict,
      case when verdict = 'duplicate' then ${REPLAY} else '' end, count
    from event_rollups`.execute(db);
  await db.schema.dropTable('event_rollups').execute();
  await db.schema.alterTable('event_rollups_012').renameTo('event_rollups').execute();
  for (const index of indexes) await sql.raw(index.sql).execute(db);
}
