import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * SQLite: one `charge_deltas` row for what a batch charged at a price to a partner under a share
 * (units, spend and earnings together), where migration 025 wrote two (the price's units and spend,
 * then the partner's spend and earnings): a batch charging thirty prices appends thirty rows instead
 * of sixty. Units that earned no partner anything (a partner without a share) go in a row whose
 * partner and share are null. A price's units and spend are now the sums of all its rows;
 * `partner_earnings_live` is unchanged (rows with a partner).
 *
 * Rows appended before this migration are read the old way, so they are folded first (into
 * `campaign_prices` and `partner_earnings`, as the fold did) and the table emptied; then
 * `campaign_prices_live` sums every row. An SQLite store is served by one release at a time, so no
 * older instance appends old rows after it.
 *
 * PostgreSQL: nothing (batches add to the counters themselves).
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') return;
  await sql`update campaign_prices set billed = billed + unfolded.units,
      spend_micros = campaign_prices.spend_micros + unfolded.spend
    from (select price_id, sum(units) as units, sum(spend_micros) as spend from charge_deltas
      where partner_id is null group by price_id) as unfolded
    where campaign_prices.id = unfolded.price_id`.execute(db);
  await sql`insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
    select price_id, partner_id, share_id, sum(spend_micros), sum(earnings_micros) from charge_deltas
    where partner_id is not null
    group by price_id, partner_id, share_id
    on conflict (price_id, partner_id, share_id) do update set
      spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
      earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`.execute(db);
  await sql`delete from charge_deltas`.execute(db);
  await sql`drop view campaign_prices_live`.execute(db);
  await sql`create view campaign_prices_live as
    select p.id, p.campaign_id, p.since, p.model, p.amount_micros, p.actor,
      p.billed + coalesce(unfolded.units, 0) as billed,
      p.spend_micros + coalesce(unfolded.spend, 0) as spend_micros
    from campaign_prices p
    left join (select price_id, sum(units) as units, sum(spend_micros) as spend from charge_deltas
      group by price_id) as unfolded on unfolded.price_id = p.id`.execute(db);
}
