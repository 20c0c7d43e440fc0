import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { withId } from './table-ids.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Money (D18): prices, and what each billable event costs, in integer micros of the deployment's
 * currency.
 *
 * - `campaigns.price_model` (`cpm`, `cpc`, `flat`) and `price_micros`: the price in force, both null
 *   for a house campaign. `campaign_prices` keeps every price a campaign has had, from when and set
 *   by whom, with the billable units charged at it (`billed`) and their cost (`spend_micros`): the
 *   n-th impression at a CPM costs F(n) − F(n − 1) counted from the price's start, so the count lives
 *   with the price, not with the campaign (a batch updating the campaign row would bump the
 *   campaigns' change feed and make every instance reload its index).
 * - `campaigns.budget_total_micros` and `budget_daily_micros` (the day in the campaign's time zone):
 *   what the campaign may spend, null for no limit; held in the commit like caps.
 * - `events.cost_micros`: each event's cost, fixed in its batch's commit (0 for every event that is
 *   not billable or not charged per event). Added with a constant default, so PostgreSQL writes no
 *   row and the partitions inherit it.
 * - `spend_micros` on `event_rollups` and `campaign_rollups` beside `count`, summed the same way,
 *   and on `campaign_counters` (a campaign's spend in total and per local day: its budgets' counter).
 * - Partners' revenue shares (`partner_revenue_shares`: basis points from an instant, the start of
 *   the date set, in the billing time zone) and what each event earns its partner
 *   (`earnings_micros` on events and both rollup tables). `partner_earnings` counts the spend and
 *   earnings of each (price, partner, share): earnings on each event are E(S + cost) − E(S) with
 *   E(S) = floor(S · bps / 10000) over that spend, so they add up with no micro lost; it is written
 *   only under the lock of the price's campaign.
 * - `campaign_delivery.spend_micros`, kept by the same triggers as its counts (recreated here).
 * - PostgreSQL: `placard_refuse(code, message)`, which raises, for a statement that must not commit.
 *
 * A store migrated to this while an instance of the previous release still compacts rollups (a
 * rolling upgrade) may sum a quarter hour into `campaign_rollups` without its spend; reports of weeks
 * read those quarter hours from there. Finish the upgrade before prices are set.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema.alterTable('campaigns').addColumn('price_model', 'text').execute();
  await db.schema.alterTable('campaigns').addColumn('price_micros', 'bigint').execute();
  for (const column of ['budget_total_micros', 'budget_daily_micros'])
    await db.schema.alterTable('campaigns').addColumn(column, 'bigint').execute();
  await db.schema
    .createTable('campaign_prices')
    .$call(withId(engine))
    .addColumn('campaign_id', 'bigint', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('amount_micros', 'bigint')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('billed', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('spend_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('campaign_prices_campaign')
    .on('campaign_prices')
    .columns(['campaign_id', 'id'])
    .execute();

  await db.schema
    .createTable('partner_revenue_shares')
    .$call(withId(engine))
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('effective_from', 'bigint', (c) => c.notNull())
    .addColumn('basis_points', 'integer', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('partner_revenue_shares_partner')
    .on('partner_revenue_shares')
    .columns(['partner_id', 'effective_from'])
    .execute();
  await db.schema
    .createTable('partner_earnings')
    .addColumn('price_id', 'bigint', (c) => c.notNull())
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('share_id', 'bigint', (c) => c.notNull())
    .addColumn('spend_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('earnings_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('partner_earnings_pk', ['price_id', 'partner_id', 'share_id'])
    .execute();
  for (const table of ['events', 'event_rollups', 'campaign_rollups'])
    await db.schema
      .alterTable(table)
      .addColumn('earnings_micros', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();

  for (const table of ['events', 'event_rollups', 'campaign_counters', 'campaign_delivery']) {
    await db.schema
      .alterTable(table)
      .addColumn(table === 'events' ? 'cost_micros' : 'spend_micros', 'bigint', (c) =>
        c.notNull().defaultTo(0),
      )
      .execute();
  }
  await db.schema
    .alterTable('campaign_rollups')
    .addColumn('spend_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (engine === 'postgres') {
    // Reports of weeks read campaign_rollups by index alone: the key carries the spend as well.
    await sql`alter table campaign_rollups drop constraint campaign_rollups_pk`.execute(db);
    await sql`alter table campaign_rollups add constraint campaign_rollups_pk
      primary key (campaign_id, slot, kind, verdict) include (count, spend_micros, earnings_micros)`.execute(
      db,
    );
  }

  if (engine === 'postgres') {
    // Raises `message` with SQLSTATE `code`: how one statement refuses itself (the event ledger's
    // batch that finds a campaign priced that the serving index had not marked, event-ledger-postgres.ts).
    await sql`create function placard_refuse(code text, message text) returns boolean language plpgsql as $$
      begin
        raise exception using errcode = code, message = message;
      end $$`.execute(db);
  }

  // campaign_delivery's triggers (migration 019), now adding the spend too.
  const upsert = (campaign: string, kind: string, added: string, spent: string) =>
    `insert into campaign_delivery (campaign_id, impressions, clicks, spend_micros) values (${campaign},
       case when ${kind} = 'impression' then ${added} else 0 end,
       case when ${kind} = 'click' then ${added} else 0 end, ${spent})
     on conflict (campaign_id) do update set
       impressions = campaign_delivery.impressions + excluded.impressions,
       clicks = campaign_delivery.clicks + excluded.clicks,
       spend_micros = campaign_delivery.spend_micros + excluded.spend_micros`;
  if (engine === 'postgres') {
    const gained = (column: string) =>
      `(case when TG_OP = 'UPDATE' then new.${column} - old.${column} else new.${column} end)`;
    await sql
      .raw(
        `create or replace function placard_add_delivery() returns trigger language plpgsql as $$
        begin
          if new.verdict = 'counted' then
            ${upsert('new.campaign_id', 'new.kind', gained('count'), gained('spend_micros'))};
          end if;
          return null;
        end $$`,
      )
      .execute(db);
  } else {
    await sql`drop trigger campaign_rollups_delivery_insert`.execute(db);
    await sql`drop trigger campaign_rollups_delivery_update`.execute(db);
    await sql
      .raw(
        `create trigger campaign_rollups_delivery_insert after insert on campaign_rollups
         when new.verdict = 'counted' begin
         ${upsert('new.campaign_id', 'new.kind', 'new.count', 'new.spend_micros')}; end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger campaign_rollups_delivery_update after update on campaign_rollups
         when new.verdict = 'counted' begin
         ${upsert('new.campaign_id', 'new.kind', 'new.count - old.count', 'new.spend_micros - old.spend_micros')}; end`,
      )
      .execute(db);
  }
}
