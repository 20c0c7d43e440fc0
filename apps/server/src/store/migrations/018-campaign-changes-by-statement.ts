import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * PostgreSQL logs campaign changes (migration 011) once per statement instead of once per row. The
 * row trigger updated the one `change_versions` row for every written row, so a statement writing
 * many rows (an import inserts 500 campaigns at a time) piled up versions of that row in one
 * transaction, each update slower than the last (20,000 campaigns imported in 130 s, against 26 s
 * for 100,000 on SQLite). A statement-level trigger reads the statement's rows from its transition
 * table, bumps the version once by their number and logs one version each, in the same order and
 * under the same lock as before: readers see the same log. Transition tables allow one event per
 * trigger, hence one trigger for each of insert, update and delete. SQLite has no statement-level
 * triggers, and its one writer at a time does not pile up versions: unchanged.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`
    create function placard_log_campaign_changes() returns trigger language plpgsql as $$
    declare
      written bigint;
      bumped bigint;
    begin
      if TG_OP = 'DELETE' then
        select count(*) into written from old_rows;
      else
        select count(*) into written from new_rows;
      end if;
      if written = 0 then
        return null;
      end if;
      update change_versions set version = version + written where topic = 'campaigns'
        returning version into bumped;
      if TG_OP = 'DELETE' then
        insert into campaign_changes (version, campaign_id)
          select bumped - written + row_number() over (), (to_jsonb(old_rows) ->> TG_ARGV[0])::bigint
          from old_rows;
      else
        insert into campaign_changes (version, campaign_id)
          select bumped - written + row_number() over (), (to_jsonb(new_rows) ->> TG_ARGV[0])::bigint
          from new_rows;
      end if;
      return null;
    end $$`.execute(db);
  const tables = [
    { table: 'campaigns', id: 'id' },
    { table: 'campaign_placements', id: 'campaign_id' },
  ];
  for (const { table, id } of tables) {
    await sql.raw(`drop trigger ${table}_row_changed on ${table}`).execute(db);
    for (const op of ['insert', 'update', 'delete']) {
      const rows = op === 'delete' ? 'old table as old_rows' : 'new table as new_rows';
      await sql
        .raw(
          `create trigger ${table}_${op}_logged after ${op} on ${table} referencing ${rows} ` +
            `for each statement execute function placard_log_campaign_changes('${id}')`,
        )
        .execute(db);
    }
  }
  await sql`drop function placard_log_campaign_change()`.execute(db);
}
