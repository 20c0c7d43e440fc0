import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

const PRICE_COLUMNS = 'id, campaign_id, since, model, amount_micros, actor';

/**
 * Money counters as readers see them: `campaign_prices_live` (each price with the units billed and
 * the spend at it) and `partner_earnings_live` (every reader sums).
 *
 * SQLite: a batch that charged its events no longer updates each price's row and each partner's
 * earnings row: a batch charges some thirty of a thousand campaigns, so nearly every page of both
 * tables was rewritten by every commit (docs/benchmarks.md). It appends what it charged to
 * `charge_deltas` instead (a price's units and spend where `partner_id` is null, a partner's spend
 * and earnings under a share otherwise; its rows fill a page), and the fold that sums appended
 * rollup rows (migration 024) sums these into `campaign_prices` and `partner_earnings` and empties
 * the table. The next batch prices each CPM run from a price's row plus what was appended since
 * (`charge-rows-sqlite.ts` keeps those sums in memory and reads them again when another connection
 * committed or a batch of its own was rolled back).
 *
 * PostgreSQL: batches add to the counters themselves; the views are the tables.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine === 'postgres') {
    await sql`create view campaign_prices_live as
      select ${sql.raw(PRICE_COLUMNS)}, billed, spend_micros from campaign_prices`.execute(db);
    await sql`create view partner_earnings_live as
      select price_id, partner_id, share_id, spend_micros, earnings_micros from partner_earnings`.execute(db);
    return;
  }
  // AUTOINCREMENT: ids keep going up after the fold empties the table, so a connection's newest id
  // tells it whether a batch of its own was rolled back (with SQLite's data_version, whether another
  // connection appended or folded meanwhile).
  await sql`create table charge_deltas (
    id integer primary key autoincrement,
    price_id bigint not null,
    partner_id bigint,
    share_id bigint,
    units bigint not null default 0,
    spend_micros bigint not null default 0,
    earnings_micros bigint not null default 0
  )`.execute(db);
  await sql`create view campaign_prices_live as
    select ${sql.raw(
      PRICE_COLUMNS.split(', ')
        .map((column) => `p.${column}`)
        .join(', '),
    )},
      p.billed + coalesce(d.units, 0) as billed, p.spend_micros + coalesce(d.spend, 0) as spend_micros
    from campaign_prices p left join (
      select price_id, sum(units) as units, sum(spend_micros) as spend from charge_deltas
      where partner_id is null group by price_id
    ) d on d.price_id = p.id`.execute(db);
  await sql`create view partner_earnings_live as
    select price_id, partner_id, share_id, spend_micros, earnings_micros from partner_earnings
    union all
    select price_id, partner_id, share_id, spend_micros, earnings_micros from charge_deltas
    where partner_id is not null`.execute(db);
}
