import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The rollups' columns as reports read them (a migration keeps its own copy). */
const COLUMNS = `minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason,
  count, spend_micros, earnings_micros, with_viewer`;

/**
 * SQLite: what a batch charged is carried by the rollup rows it appends anyway, where it had rows
 * of its own in `charge_deltas` (migrations 025 and 030): about thirty inserts a batch fewer, 0.2 M
 * of the 1.3 M instructions money cost a batch of 35 events (docs/benchmarks.md).
 *
 * `event_rollup_deltas` gains the price its events were charged at (`price_id`, null for events not
 * charged) and the partner's revenue share they earned under (`share_id`, null without one), so a
 * batch's events of one key but of two prices or shares are two rows. A price's units billed since
 * the last fold are the count of its rows, its spend and its partners' spend and earnings their
 * sums; the fold adds them to `campaign_prices` and `partner_earnings` before it sums the rows into
 * `event_rollups`. It also gains an `id` (the rowid: AUTOINCREMENT would cost every append a read
 * and a write of `sqlite_sequence`), which with a count of folds in `meta` tells the server whether
 * the rows it knows the sums of are still the table's (`charge-rows-sqlite.ts`).
 *
 * `charge_deltas`' rows are folded first and the table dropped, the rollup rows copied into the new
 * table, and the views made again on it, in one transaction (Kysely runs SQLite's migrations outside
 * one). Unlike other migrations this one removes what the previous release writes: SQLite serves
 * from one instance, so stop the server before `placard migrate` applies it (starting the new
 * release applies it by itself). A previous release left running would have its batches that charge
 * refused (its partners are answered with an error and send them again) and its folds fail, until
 * it stops: nothing acknowledged is lost, and the new release folds what it appended.
 *
 * PostgreSQL: nothing (batches add to the counters themselves).
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') return;
  await db.transaction().execute(async (tx) => {
    // Both formats of charge rows (025's and 030's), as `campaign_prices_live` read them.
    await sql`update campaign_prices set billed = billed + unfolded.units,
        spend_micros = campaign_prices.spend_micros + unfolded.spend
      from (select price_id, sum(units) as units,
          sum(case when partner_id is null or units > 0 then spend_micros else 0 end) as spend
        from charge_deltas group by price_id) as unfolded
      where campaign_prices.id = unfolded.price_id`.execute(tx);
    await sql`insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
      select price_id, partner_id, share_id, sum(spend_micros), sum(earnings_micros) from charge_deltas
      where partner_id is not null
      group by price_id, partner_id, share_id
      on conflict (price_id, partner_id, share_id) do update set
        spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
        earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`.execute(tx);
    for (const view of ['campaign_prices_live', 'partner_earnings_live', 'event_rollups_live'])
      await sql`drop view if exists ${sql.raw(view)}`.execute(tx);
    await sql`drop table charge_deltas`.execute(tx);
    await sql`create table rollup_deltas_charged (
      id integer primary key,
      minute bigint not null,
      campaign_id bigint not null,
      partner_id bigint not null,
      placement_id text not null,
      country text not null,
      device text not null,
      kind text not null,
      verdict text not null,
      reason text not null,
      count bigint not null,
      spend_micros bigint not null default 0,
      earnings_micros bigint not null default 0,
      with_viewer bigint not null default 0,
      price_id bigint,
      share_id bigint
    )`.execute(tx);
    await sql`insert into rollup_deltas_charged (${sql.raw(COLUMNS)})
      select ${sql.raw(COLUMNS)} from event_rollup_deltas`.execute(tx);
    await sql`drop table event_rollup_deltas`.execute(tx);
    await sql`alter table rollup_deltas_charged rename to event_rollup_deltas`.execute(tx);
    await sql`create view event_rollups_live as
      select ${sql.raw(COLUMNS)} from event_rollups
      union all
      select ${sql.raw(COLUMNS)} from event_rollup_deltas`.execute(tx);
    await sql`create view campaign_prices_live as
      select p.id, p.campaign_id, p.since, p.model, p.amount_micros, p.actor,
        p.billed + coalesce(unfolded.units, 0) as billed,
        p.spend_micros + coalesce(unfolded.spend, 0) as spend_micros
      from campaign_prices p
      left join (select price_id, sum(count) as units, sum(spend_micros) as spend
        from event_rollup_deltas where price_id is not null group by price_id) as unfolded
        on unfolded.price_id = p.id`.execute(tx);
    await sql`create view partner_earnings_live as
      select price_id, partner_id, share_id, spend_micros, earnings_micros from partner_earnings
      union all
      select price_id, partner_id, share_id, spend_micros, earnings_micros from event_rollup_deltas
      where share_id is not null`.execute(tx);
  });
}
