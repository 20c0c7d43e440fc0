import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * SQLite: one `charge_deltas` row for what a batch charged at a price to a partner under a share
 * (units, spend and earnings together), where migration 025 wrote two (the price's units and spend,
 * then the partner's spend and earnings). Units that earned no partner anything (a partner without
 * a share) go in a row whose partner and share are null. A batch whose units all earned a share
 * appends one row for each (price, partner) instead of one more for each price besides.
 *
 * A price's units are the sum of all its rows, its spend that of the rows with units: a row of
 * 025's for a partner has none (its spend is already in its price's row), a row of this format
 * always has some. So rows of both formats read right (`campaign_prices_live` and the fold), as a
 * server of the previous release still running while `placard migrate` applies this would append
 * the old ones. What cannot work is the previous release's fold after this one has appended: it
 * would leave out the units and spend of this format's partner rows. Downgrading is restoring a
 * backup (docs/deployment.md).
 *
 * The rows appended before are folded first all the same, in one transaction with the new view
 * (Kysely runs SQLite's migrations outside one): a failure midway leaves nothing done.
 *
 * PostgreSQL: nothing (batches add to the counters themselves).
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') return;
  await db.transaction().execute(async (tx) => {
    await sql`update campaign_prices set billed = billed + unfolded.units,
        spend_micros = campaign_prices.spend_micros + unfolded.spend
      from (select price_id, sum(units) as units, sum(spend_micros) as spend from charge_deltas
        where partner_id is null group by price_id) as unfolded
      where campaign_prices.id = unfolded.price_id`.execute(tx);
    await sql`insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
      select price_id, partner_id, share_id, sum(spend_micros), sum(earnings_micros) from charge_deltas
      where partner_id is not null
      group by price_id, partner_id, share_id
      on conflict (price_id, partner_id, share_id) do update set
        spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
        earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`.execute(tx);
    await sql`delete from charge_deltas`.execute(tx);
    await sql`drop view if exists campaign_prices_live`.execute(tx);
    await sql`create view campaign_prices_live as
      select p.id, p.campaign_id, p.since, p.model, p.amount_micros, p.actor,
        p.billed + coalesce(unfolded.units, 0) as billed,
        p.spend_micros + coalesce(unfolded.spend, 0) as spend_micros
      from campaign_prices p
      left join (select price_id, sum(units) as units,
          sum(case when partner_id is null or units > 0 then spend_micros else 0 end) as spend
        from charge_deltas group by price_id) as unfolded on unfolded.price_id = p.id`.execute(tx);
  });
}
