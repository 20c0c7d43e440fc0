import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Which campaign each bump of the `campaigns` change version was for, so every instance can apply a
 * change to its index in place instead of rebuilding it (docs/architecture.md, "The serving
 * index"). Each written row of `campaigns` or `campaign_placements` bumps the version and logs
 * `(version, campaign_id)` in one trigger, while holding the version row's lock until commit: the
 * log's versions are therefore committed in order, and a reader that has seen version V has seen
 * every log row up to V. A bump with no log row (a placement changed, a truncate, rows pruned from
 * the log) tells the reader to rebuild the whole index.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema
    .createTable('campaign_changes')
    .addColumn('version', 'bigint', (c) => c.primaryKey())
    .addColumn('campaign_id', 'bigint', (c) => c.notNull())
    .execute();
  const tables = [
    { table: 'campaigns', id: 'id' },
    { table: 'campaign_placements', id: 'campaign_id' },
  ];
  if (engine === 'postgres') {
    await sql`
      create function placard_log_campaign_change() returns trigger language plpgsql as $$
      declare
        bumped bigint;
      begin
        update change_versions set version = version + 1 where topic = 'campaigns'
          returning version into bumped;
        if TG_OP = 'DELETE' then
          insert into campaign_changes (version, campaign_id) values (bumped, (to_jsonb(old) ->> TG_ARGV[0])::bigint);
        else
          insert into campaign_changes (version, campaign_id) values (bumped, (to_jsonb(new) ->> TG_ARGV[0])::bigint);
        end if;
        return null;
      end $$`.execute(db);
    for (const { table, id } of tables) {
      // The statement-level trigger of 001 stays for truncate only (an unexplained bump: rebuild).
      await sql.raw(`drop trigger ${table}_changed on ${table}`).execute(db);
      await sql
        .raw(
          `create trigger ${table}_changed after truncate on ${table} ` +
            `for each statement execute function placard_bump_version('campaigns')`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_row_changed after insert or update or delete on ${table} ` +
            `for each row execute function placard_log_campaign_change('${id}')`,
        )
        .execute(db);
    }
    return;
  }
  // SQLite triggers run for each row, and one writer at a time: bump, then log the new version.
  for (const { table, id } of tables) {
    for (const op of ['insert', 'update', 'delete']) {
      const row = op === 'delete' ? 'old' : 'new';
      await sql.raw(`drop trigger ${table}_${op}_changed`).execute(db);
      await sql
        .raw(
          `create trigger ${table}_${op}_changed after ${op} on ${table} begin ` +
            `update change_versions set version = version + 1 where topic = 'campaigns'; ` +
            `insert into campaign_changes (version, campaign_id) ` +
            `select version, ${row}.${id} from change_versions where topic = 'campaigns'; end`,
        )
        .execute(db);
    }
  }
}
