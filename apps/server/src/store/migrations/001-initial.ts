import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { DEFAULT_PLACEMENTS } from '../../domain/placements.js';
import type { Engine } from '../connect.js';

/** Tables whose changes every instance must see within 2 s, grouped by what they refresh. */
export const WATCHED_TABLES: Record<string, readonly string[]> = {
  campaigns: ['campaigns', 'campaign_placements', 'placements'],
  keys: ['api_keys', 'partners'],
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

export async function up(db: AnyDb, engine: Engine): Promise<void> {
  // Auto-incrementing ids: SQLite's rowid alias, PostgreSQL's bigserial.
  const withId = <T extends string>(table: CreateTableBuilder<T>) =>
    engine === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigserial', (c) => c.primaryKey());

  await db.schema
    .createTable('placements')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('advertisers')
    .$call(withId)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('campaigns')
    .$call(withId)
    .addColumn('advertiser_id', 'bigint', (c) => c.notNull().references('advertisers.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('category', 'text')
    .addColumn('destination_url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('countries', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('devices', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('start_at', 'bigint')
    .addColumn('end_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('weight_positive', sql`weight >= 1`)
    .execute();
  await db.schema.createIndex('campaigns_status').on('campaigns').column('status').execute();
  await db.schema.createIndex('campaigns_advertiser').on('campaigns').column('advertiser_id').execute();

  await db.schema
    .createTable('campaign_placements')
    .addColumn('campaign_id', 'bigint', (c) => c.notNull().references('campaigns.id').onDelete('cascade'))
    .addColumn('placement_id', 'text', (c) => c.notNull().references('placements.id'))
    .addPrimaryKeyConstraint('campaign_placements_pk', ['campaign_id', 'placement_id'])
    .execute();
  await db.schema
    .createIndex('campaign_placements_placement')
    .on('campaign_placements')
    .column('placement_id')
    .execute();

  await db.schema
    .createTable('partners')
    .$call(withId)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .$call(withId)
    .addColumn('partner_id', 'bigint', (c) => c.notNull().references('partners.id'))
    .addColumn('label', 'text')
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('events')
    .$call(withId)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'bigint', (c) => c.notNull().references('campaigns.id'))
    .addColumn('placement_id', 'text', (c) => c.notNull())
    .addColumn('country', 'text')
    .addColumn('device', 'text')
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('api_key_id', 'bigint', (c) => c.notNull().references('api_keys.id'))
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .execute();
  await db.schema.createIndex('events_occurred').on('events').column('occurred_at').execute();
  await db.schema
    .createIndex('events_campaign')
    .on('events')
    .columns(['campaign_id', 'occurred_at'])
    .execute();

  await db.schema
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('change_versions')
    .addColumn('topic', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .insertInto('change_versions')
    .values(Object.keys(WATCHED_TABLES).map((topic) => ({ topic, version: 0 })))
    .execute();
  await createChangeTriggers(db, engine);

  const now = Date.now();
  await db
    .insertInto('placements')
    .values(
      DEFAULT_PLACEMENTS.map((p) => ({ id: p.id, description: p.description, enabled: 1, created_at: now })),
    )
    .execute();
}

/**
 * Triggers bump a topic's version on any write to its tables, so a change made by this process, by
 * the CLI in another process or by hand in SQL reaches every instance's in-memory index.
 */
async function createChangeTriggers(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') {
    await sql`
      create function placard_bump_version() returns trigger language plpgsql as $$
      begin
        update change_versions set version = version + 1 where topic = TG_ARGV[0];
        return null;
      end $$`.execute(db);
  }
  for (const [topic, tables] of Object.entries(WATCHED_TABLES)) {
    for (const table of tables) {
      if (engine === 'postgres') {
        await sql
          .raw(
            `create trigger ${table}_changed after insert or update or delete or truncate on ${table} ` +
              `for each statement execute function placard_bump_version('${topic}')`,
          )
          .execute(db);
        continue;
      }
      for (const op of ['insert', 'update', 'delete']) {
        await sql
          .raw(
            `create trigger ${table}_${op}_changed after ${op} on ${table} begin ` +
              `update change_versions set version = version + 1 where topic = '${topic}'; end`,
          )
          .execute(db);
      }
    }
  }
}
