// A batch's money rows on SQLite (`ChargeRows`, charge-rows.ts): prepared once per connection and run
// inside the batch's transaction. A statement costs SQLite no round trip, while Kysely building and
// SQLite compiling a multi-row statement of a size not seen before cost more than the rows
// themselves: the same reason `event-ledger-sqlite.ts` writes events this way. Writes go row by row;
// the earnings a batch reads come in one statement as one JSON text (its pairs passed as JSON too),
// since better-sqlite3 builds every row it returns element by element through V8's slow path. (The
// price in force comes with the batch's campaigns: `settlingCampaignsSqlite`.)
//
// What a batch charged is appended to `charge_deltas` rather than added to each price's row and
// each partner's earnings row (migration 025: those rows are spread over every page of their
// tables), one row per (price, partner, share) charged (migration 030), and folded into them every
// second with the rollups (`foldChargesSqlite`). A price's units billed and a partner's earnings so
// far are then the row plus what was appended since: the connection keeps those sums in memory
// (`Unfolded`), good for as long as no other connection has committed and the newest appended id is
// the one it appended last.
import type BetterSqlite3 from 'better-sqlite3';
import type { Micros } from '../domain/money.js';
import type { ChargeRows, EarningsRow, ShareRow } from './charge-rows.js';

const LATEST_PRICE = `select id, model, amount_micros, billed from campaign_prices
  where campaign_id = ? order by id desc limit 1`;

const SPEND_COUNTER = `select spend_micros from campaign_counters where campaign_id = ? and day = ?`;

const SHARES = `select id, effective_from, basis_points from partner_revenue_shares
  where partner_id = ? and effective_from <= ? order by effective_from desc, id desc`;

/**
 * The earnings rows of (price, partner) pairs, `?` a JSON array of `[price id, partner id]`, as one
 * JSON array of `[price id, partner id, share id, spend, earnings]`.
 */
const EARNINGS = `select json_group_array(json_array(e.price_id, e.partner_id, e.share_id, e.spend_micros,
    e.earnings_micros))
  from json_each(?) as pair
  join partner_earnings e on e.price_id = pair.value ->> 0 and e.partner_id = pair.value ->> 1`;

/**
 * What a batch charged at a price to a partner under a share: the units, their spend and the
 * partner's earnings; partner and share null for units that earned no partner anything (migration
 * 030). A price's units and spend are the sums of all its rows.
 */
const APPEND_CHARGE = `insert into charge_deltas (price_id, partner_id, share_id, units, spend_micros,
  earnings_micros) values (?, ?, ?, ?, ?, ?)`;

/**
 * The newest appended id, and the table's AUTOINCREMENT counter (`sqlite_sequence`), which a
 * rollback restores with the rows: after a fold has emptied the table, only the counter tells a
 * committed fold from a rolled-back transaction that appended and folded.
 */
const NEWEST_DELTA = `select max(id) as id,
  (select seq from sqlite_sequence where name = 'charge_deltas') as seq from charge_deltas`;

/** Changes whenever another connection commits (SQLite's `data_version`); not for this one's own. */
const DATA_VERSION = `pragma data_version`;

/**
 * A price's units are the sum of its rows, its spend that of its rows with units: a partner's row
 * appended before migration 030 has none, its spend being in its price's row already.
 */
const UNFOLDED_PRICES = `select price_id, sum(units) as units,
    sum(case when partner_id is null or units > 0 then spend_micros else 0 end) as spend
  from charge_deltas group by price_id`;

const UNFOLDED_EARNINGS = `select price_id, partner_id, share_id, sum(spend_micros) as spend,
  sum(earnings_micros) as earnings from charge_deltas where partner_id is not null
  group by price_id, partner_id, share_id`;

/** The fold: prices first, then earnings, in key order (the upsert's WHERE lets SQLite parse it). */
const FOLD_PRICES = `update campaign_prices set billed = billed + unfolded.units,
    spend_micros = campaign_prices.spend_micros + unfolded.spend
  from (${UNFOLDED_PRICES}) as unfolded
  where campaign_prices.id = unfolded.price_id`;

const FOLD_EARNINGS = `insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
  select price_id, partner_id, share_id, sum(spend_micros), sum(earnings_micros) from charge_deltas
  where partner_id is not null
  group by price_id, partner_id, share_id order by price_id, partner_id, share_id
  on conflict (price_id, partner_id, share_id) do update set
    spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
    earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`;

/** Without a WHERE, SQLite empties the table at once; AUTOINCREMENT keeps its ids going up. */
const EMPTY_CHARGE_DELTAS = `delete from charge_deltas`;

const ADD_TO_SPEND_COUNTER = `insert into campaign_counters (campaign_id, day, impressions, clicks, spend_micros)
  values (?, ?, 0, 0, ?)
  on conflict (campaign_id, day) do update set spend_micros = campaign_counters.spend_micros + excluded.spend_micros`;

interface Statements {
  /**
   * Three read statements give rows as arrays, in their columns' order (`raw`), and `earnings` one
   * JSON text of such arrays: a change to a statement's columns is a change to its tuple here.
   */
  latestPrice: BetterSqlite3.Statement<
    unknown[],
    [id: number, model: string | null, amountMicros: number | null, billed: number]
  >;
  spendCounter: BetterSqlite3.Statement<unknown[], [spendMicros: number]>;
  shares: BetterSqlite3.Statement<unknown[], [id: number, effectiveFrom: number, basisPoints: number]>;
  earnings: BetterSqlite3.Statement<[string], string>;
  appendCharge: BetterSqlite3.Statement;
  addToSpendCounter: BetterSqlite3.Statement;
  newestDelta: BetterSqlite3.Statement<unknown[], { id: number | null; seq: number | null }>;
  dataVersion: BetterSqlite3.Statement<unknown[], { data_version: number }>;
  unfoldedPrices: BetterSqlite3.Statement<unknown[], { price_id: number; units: number; spend: number }>;
  unfoldedEarnings: BetterSqlite3.Statement<
    unknown[],
    { price_id: number; partner_id: number; share_id: number; spend: number; earnings: number }
  >;
}

/** What one (price, partner) earned under each share since the last fold: share id → sums. */
type UnfoldedShares = Map<number, { spend: number; earnings: number }>;
const noShares = (): UnfoldedShares => new Map();

/**
 * The sums of `charge_deltas` as this connection last knew them: exact while no other connection
 * has committed since (`dataVersion`: its appends, its folds) and the table's newest id and
 * AUTOINCREMENT counter are `newest` and `seq` (a rolled-back transaction of this one lowers the
 * counter, and the id too unless a fold of its own had emptied the table). Ids alone would not do:
 * a rollback hands its ids out again, so another connection's appends after it could end at the
 * same newest id. Read again from the table otherwise.
 *
 * `totals` holds, for the (price, partner) pairs read since, each share's spend and earnings in
 * all (the `partner_earnings` row plus what was appended): a batch then reads no earnings row it
 * has already read or written. A fold by this connection moves sums from the appended rows to the
 * rows and leaves the totals as they are (`foldChargesSqlite`); anything else that makes the sums
 * stale drops the totals with them.
 */
interface Unfolded {
  newest: number | null;
  seq: number | null;
  dataVersion: number;
  prices: Map<number, { units: number; spend: number }>;
  earnings: Map<string, UnfoldedShares>;
  totals: Map<string, UnfoldedShares>;
}

/** Past this many (price, partner) pairs, a fold forgets the totals (read again as batches need them). */
const MAX_TOTALS = 100_000;

const pairKey = (priceId: number, partnerId: number): string => `${priceId}:${partnerId}`;

/** Prepared once per connection, on first use (after migrations have created the tables). */
const prepared = new WeakMap<BetterSqlite3.Database, Statements>();

function statementsOf(sqlite: BetterSqlite3.Database): Statements {
  let statements = prepared.get(sqlite);
  if (!statements) {
    statements = {
      // Rows as arrays: better-sqlite3 builds a row object property by property, through V8's slow
      // path for each column, which with dozens of rows a batch cost money more than the reads
      // themselves (instructions counted with valgrind, docs/benchmarks.md); `earnings`, read for
      // many pairs at once, as one JSON text. These texts are this module's own, so no other user
      // of the connection's statement cache gets the mode.
      latestPrice: sqlite
        .prepare<unknown[], [number, string | null, number | null, number]>(LATEST_PRICE)
        .raw(true),
      spendCounter: sqlite.prepare<unknown[], [number]>(SPEND_COUNTER).raw(true),
      shares: sqlite.prepare<unknown[], [number, number, number]>(SHARES).raw(true),
      earnings: sqlite.prepare<[string], string>(EARNINGS).pluck(true),
      appendCharge: sqlite.prepare(APPEND_CHARGE),
      addToSpendCounter: sqlite.prepare(ADD_TO_SPEND_COUNTER),
      newestDelta: sqlite.prepare<unknown[], { id: number | null; seq: number | null }>(NEWEST_DELTA),
      dataVersion: sqlite.prepare<unknown[], { data_version: number }>(DATA_VERSION),
      unfoldedPrices: sqlite.prepare(UNFOLDED_PRICES),
      unfoldedEarnings: sqlite.prepare(UNFOLDED_EARNINGS),
    };
    prepared.set(sqlite, statements);
  }
  return statements;
}

const unfoldedOf = new WeakMap<BetterSqlite3.Database, Unfolded>();

/** This connection's sums of `charge_deltas`, read again if anything but its own appends changed it. */
function unfolded(sqlite: BetterSqlite3.Database, statements: Statements): Unfolded {
  const table = statements.newestDelta.get();
  const newest = table?.id ?? null;
  const seq = table?.seq ?? null;
  const dataVersion = Number(statements.dataVersion.get()?.data_version);
  const known = unfoldedOf.get(sqlite);
  if (
    known !== undefined &&
    known.newest === newest &&
    known.seq === seq &&
    known.dataVersion === dataVersion
  )
    return known;
  const fresh: Unfolded = {
    newest,
    seq,
    dataVersion,
    prices: new Map(),
    earnings: new Map(),
    totals: new Map(),
  };
  for (const row of statements.unfoldedPrices.all())
    fresh.prices.set(Number(row.price_id), { units: Number(row.units), spend: Number(row.spend) });
  for (const row of statements.unfoldedEarnings.all()) {
    const key = pairKey(Number(row.price_id), Number(row.partner_id));
    const shares: UnfoldedShares = fresh.earnings.get(key) ?? noShares();
    shares.set(Number(row.share_id), { spend: Number(row.spend), earnings: Number(row.earnings) });
    fresh.earnings.set(key, shares);
  }
  unfoldedOf.set(sqlite, fresh);
  return fresh;
}

/** Units billed at each price that batches appended since the last fold, by price id. */
export function unfoldedUnits(sqlite: BetterSqlite3.Database): (priceId: number) => number {
  const { prices } = unfolded(sqlite, statementsOf(sqlite));
  return (priceId) => prices.get(priceId)?.units ?? 0;
}

/** Adds a charge's spend and earnings to its pair's share in `sums`. */
function addTo(sums: Map<string, UnfoldedShares>, key: string, charge: EarningsRow): void {
  const shares: UnfoldedShares = sums.get(key) ?? noShares();
  const share = shares.get(charge.shareId) ?? { spend: 0, earnings: 0 };
  share.spend += charge.spendMicros;
  share.earnings += charge.earningsMicros;
  shares.set(charge.shareId, share);
  sums.set(key, shares);
}

/** Runs an append to `charge_deltas` and notes its id as the newest this connection knows of. */
function append(known: Unfolded, statement: BetterSqlite3.Statement, ...values: unknown[]): void {
  known.newest = Number(statement.run(...values).lastInsertRowid);
  known.seq = known.newest;
}

/**
 * Sums what batches appended to `charge_deltas` into `campaign_prices` and `partner_earnings`, and
 * empties it, inside the caller's transaction; returns how many appended rows it folded.
 */
export function foldChargesSqlite(sqlite: BetterSqlite3.Database): number {
  const known = unfolded(sqlite, statementsOf(sqlite));
  sqlite.prepare(FOLD_PRICES).run();
  sqlite.prepare(FOLD_EARNINGS).run();
  const folded = sqlite.prepare(EMPTY_CHARGE_DELTAS).run().changes;
  // Nothing appended any more, all of it in the rows: the totals stay what they were (and `seq`,
  // which tells this fold committed from a transaction rolled back with it).
  known.newest = null;
  known.prices = new Map();
  known.earnings = new Map();
  if (known.totals.size > MAX_TOTALS) known.totals = new Map();
  return folded;
}

/** The money rows of a batch on the SQLite connection `sqlite` (its transaction is the batch's). */
export function sqliteChargeRows(sqlite: BetterSqlite3.Database): ChargeRows {
  const statements = statementsOf(sqlite);
  return {
    // A batch gets its prices with its campaigns (`settlingCampaignsSqlite`); this answers callers
    // that have only ids.
    latestPrices(campaignIds) {
      const { prices } = unfolded(sqlite, statements);
      return Promise.resolve(
        campaignIds.flatMap((campaignId) => {
          const row = statements.latestPrice.get(campaignId);
          if (row === undefined) return [];
          const [id, model, amountMicros, billed] = row;
          return [
            {
              id: Number(id),
              campaignId,
              model,
              amountMicros: amountMicros === null ? null : Number(amountMicros),
              billed: Number(billed) + (prices.get(Number(id))?.units ?? 0),
            },
          ];
        }),
      );
    },

    spendCounters(campaignIds, days) {
      const rows = [];
      for (const campaignId of campaignIds)
        for (const day of days) {
          const row = statements.spendCounter.get(campaignId, day);
          if (row !== undefined) rows.push({ campaignId, day, spendMicros: Number(row[0]) as Micros });
        }
      return Promise.resolve(rows);
    },

    revenueShares(partnerIds, until) {
      const rows: ShareRow[] = [];
      for (const partnerId of partnerIds)
        for (const [id, effectiveFrom, basisPoints] of statements.shares.all(partnerId, until))
          rows.push({
            id: Number(id),
            partnerId,
            effectiveFrom: Number(effectiveFrom),
            basisPoints: Number(basisPoints),
          });
      return Promise.resolve(rows);
    },

    earningsCounters(pairs) {
      const known = unfolded(sqlite, statements);
      // Each pair once: a pair's rows read twice would be added to its totals twice.
      const unread = [
        ...new Map(
          pairs
            .filter((pair) => !known.totals.has(pairKey(pair.priceId, pair.partnerId)))
            .map((pair) => [pairKey(pair.priceId, pair.partnerId), pair]),
        ).values(),
      ];
      if (unread.length > 0) {
        for (const { priceId, partnerId } of unread) {
          // What was appended since the last fold, then the rows folded before it.
          const shares: UnfoldedShares = new Map();
          for (const [shareId, sums] of known.earnings.get(pairKey(priceId, partnerId)) ?? [])
            shares.set(shareId, { ...sums });
          known.totals.set(pairKey(priceId, partnerId), shares);
        }
        const folded = JSON.parse(
          statements.earnings.get(JSON.stringify(unread.map((pair) => [pair.priceId, pair.partnerId]))) ??
            '[]',
        ) as [priceId: number, partnerId: number, shareId: number, spend: number, earned: number][];
        for (const [priceId, partnerId, shareId, spend, earned] of folded) {
          const shares = known.totals.get(pairKey(priceId, partnerId)) as UnfoldedShares;
          const sums = shares.get(shareId) ?? { spend: 0, earnings: 0 };
          sums.spend += spend;
          sums.earnings += earned;
          shares.set(shareId, sums);
        }
      }
      const rows: EarningsRow[] = [];
      for (const { priceId, partnerId } of pairs)
        for (const [shareId, sums] of known.totals.get(pairKey(priceId, partnerId)) ?? [])
          rows.push({
            priceId,
            partnerId,
            shareId,
            spendMicros: sums.spend as Micros,
            earningsMicros: sums.earnings as Micros,
          });
      return Promise.resolve(rows);
    },

    addToSpendCounters(rows) {
      for (const row of rows) statements.addToSpendCounter.run(row.campaignId, row.day, row.spendMicros);
      return Promise.resolve();
    },

    addCharges(prices, earnings) {
      const known = unfolded(sqlite, statements);
      // One row for each (price, partner, share) charged, and one for the rest of a price's units
      // (partners without a share): a price's units and spend are the sum of its rows.
      const shared = new Map<number, { units: number; spend: number }>();
      for (const row of earnings) {
        append(
          known,
          statements.appendCharge,
          row.priceId,
          row.partnerId,
          row.shareId,
          row.units,
          row.spendMicros,
          row.earningsMicros,
        );
        const sums = shared.get(row.priceId) ?? { units: 0, spend: 0 };
        sums.units += row.units;
        sums.spend += row.spendMicros;
        shared.set(row.priceId, sums);
        const key = pairKey(row.priceId, row.partnerId);
        addTo(known.earnings, key, row);
        if (known.totals.has(key)) addTo(known.totals, key, row);
      }
      for (const charge of prices) {
        const rest = {
          units: charge.units - (shared.get(charge.priceId)?.units ?? 0),
          spend: charge.costMicros - (shared.get(charge.priceId)?.spend ?? 0),
        };
        if (rest.units !== 0 || rest.spend !== 0)
          append(known, statements.appendCharge, charge.priceId, null, null, rest.units, rest.spend, 0);
        const sums = known.prices.get(charge.priceId) ?? { units: 0, spend: 0 };
        sums.units += charge.units;
        sums.spend += charge.costMicros;
        known.prices.set(charge.priceId, sums);
      }
      return Promise.resolve();
    },
  };
}
