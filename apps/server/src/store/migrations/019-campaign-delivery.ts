import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * The campaigns list shows each campaign's delivery in total and sorts by it, over 100,000
 * campaigns. Summing `campaign_rollups` for that reads every quarter hour of every campaign's
 * flight (35,000 rows a year each); `campaign_delivery` holds the sum itself: each campaign's
 * counted impressions and clicks in `campaign_rollups`, that is, before the `meta` key
 * `rollups_compacted_before` (the list adds the minutes since from `event_rollups`).
 *
 * Triggers on `campaign_rollups` keep it: compaction's inserts and a late batch's additions to a
 * quarter hour already compacted alike, in their own transactions, on either engine and whichever
 * release writes them (tracking's hot path never writes `campaign_rollups` otherwise, so it costs
 * a batch nothing). Existing sums are copied now. `campaigns_title` sorts the list by name.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema
    .createTable('campaign_delivery')
    .addColumn('campaign_id', 'bigint', (c) => c.primaryKey())
    .addColumn('impressions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('campaigns_title').on('campaigns').columns(['title', 'id']).execute();

  // The change to a campaign's sums when a counted row of `campaign_rollups` gains `added`.
  const upsert = (campaign: string, kind: string, added: string) =>
    `insert into campaign_delivery (campaign_id, impressions, clicks) values (${campaign},
       case when ${kind} = 'impression' then ${added} else 0 end,
       case when ${kind} = 'click' then ${added} else 0 end)
     on conflict (campaign_id) do update set
       impressions = campaign_delivery.impressions + excluded.impressions,
       clicks = campaign_delivery.clicks + excluded.clicks`;
  if (engine === 'postgres') {
    await sql
      .raw(
        `create function placard_add_delivery() returns trigger language plpgsql as $$
        begin
          if new.verdict = 'counted' then
            ${upsert('new.campaign_id', 'new.kind', tgAdded())};
          end if;
          return null;
        end $$`,
      )
      .execute(db);
    await sql`create trigger campaign_rollups_delivery after insert or update on campaign_rollups
      for each row execute function placard_add_delivery()`.execute(db);
  } else {
    await sql
      .raw(
        `create trigger campaign_rollups_delivery_insert after insert on campaign_rollups
         when new.verdict = 'counted' begin ${upsert('new.campaign_id', 'new.kind', 'new.count')}; end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger campaign_rollups_delivery_update after update on campaign_rollups
         when new.verdict = 'counted' begin
         ${upsert('new.campaign_id', 'new.kind', 'new.count - old.count')}; end`,
      )
      .execute(db);
  }

  await db
    .insertInto('campaign_delivery')
    .columns(['campaign_id', 'impressions', 'clicks'])
    .expression((eb) =>
      eb
        .selectFrom('campaign_rollups')
        .select((s) => [
          'campaign_id',
          s.fn.sum(sql`case when kind = 'impression' then count else 0 end`).as('impressions'),
          s.fn.sum(sql`case when kind = 'click' then count else 0 end`).as('clicks'),
        ])
        .where('verdict', '=', 'counted')
        .groupBy('campaign_id'),
    )
    .execute();
}

/** PostgreSQL: what a row of `campaign_rollups` gained, inserted or updated. */
function tgAdded(): string {
  return `(case when TG_OP = 'UPDATE' then new.count - old.count else new.count end)`;
}
