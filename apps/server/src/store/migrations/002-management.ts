import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** Adds one column per statement: SQLite's ALTER TABLE takes one at a time. */
async function addColumns(
  db: AnyDb,
  table: string,
  columns: Array<[string, 'text' | 'bigint' | 'integer', string?]>,
) {
  for (const [name, type, defaultValue] of columns) {
    await db.schema
      .alterTable(table)
      .addColumn(name, type, (c) => (defaultValue === undefined ? c : c.notNull().defaultTo(defaultValue)))
      .execute();
  }
}

/** Management: partner settings, key lifecycle and limits, campaign caps and time zones, audit log. */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  const withId = <T extends string>(table: CreateTableBuilder<T>) =>
    engine === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigserial', (c) => c.primaryKey());

  await addColumns(db, 'partners', [
    ['blocked_categories', 'text', '[]'],
    ['updated_at', 'bigint', '0'],
  ]);
  await addColumns(db, 'advertisers', [['updated_at', 'bigint', '0']]);
  await addColumns(db, 'api_keys', [
    ['expires_at', 'bigint'],
    ['suspended_reason', 'text'],
    ['suspended_at', 'bigint'],
    ['fetch_rate', 'integer'],
    ['fetch_burst', 'integer'],
    ['events_rate', 'integer'],
    ['events_burst', 'integer'],
  ]);
  await addColumns(db, 'campaigns', [
    ['time_zone', 'text', 'UTC'],
    ['cap_impressions_total', 'bigint'],
    ['cap_clicks_total', 'bigint'],
    ['cap_impressions_daily', 'bigint'],
    ['cap_clicks_daily', 'bigint'],
    ['capped_until', 'bigint'],
    ['rejection_reason', 'text'],
  ]);

  // Last use is written often and must not wake every instance's key reload, so it lives apart
  // from the watched api_keys table.
  await db.schema
    .createTable('api_key_usage')
    .addColumn('api_key_id', 'bigint', (c) => c.primaryKey().references('api_keys.id'))
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    .execute();

  // Per-campaign event counts for caps: one row per local day (campaign time zone) and one 'total'.
  await db.schema
    .createTable('campaign_counters')
    .addColumn('campaign_id', 'bigint', (c) => c.notNull().references('campaigns.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('impressions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('campaign_counters_pk', ['campaign_id', 'day'])
    .execute();

  await db.schema
    .createTable('admin_tokens')
    .$call(withId)
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    // 'operator' sees everything; advertiser and partner scopes are reserved for the dashboard.
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('operator'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('audit_log')
    .$call(withId)
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute();
  await db.schema
    .createIndex('audit_log_object')
    .on('audit_log')
    .columns(['object_type', 'object_id', 'id'])
    .execute();
}
