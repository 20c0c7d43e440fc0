// A batch's money rows on SQLite (`ChargeRows`, charge-rows.ts): prepared once per connection and run
// inside the batch's transaction. A statement costs SQLite no round trip, while Kysely building and
// SQLite compiling a multi-row statement of a size not seen before cost more than the rows
// themselves: the same reason `event-ledger-sqlite.ts` writes events this way. Writes go row by row;
// the earnings a batch reads come in one statement as one JSON text (its pairs passed as JSON too),
// since better-sqlite3 builds every row it returns element by element through V8's slow path. (The
// price in force comes with the batch's campaigns: `settlingCampaignsSqlite`.)
//
// What a batch charged is not added to each price's row and each partner's earnings row (migration
// 025: those rows are spread over every page of their tables): the rollup rows the batch appends to
// `event_rollup_deltas` carry it, each with the price its events were charged at and the share they
// earned under (migration 031), and the fold adds them to those rows every second
// (`foldChargesSqlite`) before it sums the rollups. A price's units billed and a partner's earnings
// so far are then the row plus what was appended since: the connection keeps those sums in memory
// (`Unfolded`), good for as long as no other connection has committed and the newest appended id and
// the count of folds are those it knows (a rollback of its own lowers one or the other).
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

/** How many folds the store has had (`meta`), counted by each fold in its transaction. */
const FOLDS = 'rollup_deltas_folds';

/**
 * The newest appended id; the folds so far, which a rollback restores with the rows: after a fold
 * has emptied the table, only they tell a committed fold from a rolled-back transaction that
 * appended and folded; and SQLite's `data_version`, which changes whenever another connection
 * commits (not for this one's own). One statement: a batch asks it up to three times.
 */
const NEWEST_DELTA = `select max(id) as id, (select value from meta where key = '${FOLDS}') as folds,
  (select data_version from pragma_data_version) as data_version
  from event_rollup_deltas`;

const COUNT_FOLD = `insert into meta (key, value) values ('${FOLDS}', '1')
  on conflict (key) do update set value = cast(meta.value as integer) + 1 returning value`;

/** A price's units are the events of its rollup rows (only charged events carry a price). */
const UNFOLDED_PRICES = `select price_id, sum(count) as units, sum(spend_micros) as spend
  from event_rollup_deltas where price_id is not null group by price_id`;

const UNFOLDED_EARNINGS = `select price_id, partner_id, share_id, sum(spend_micros) as spend,
  sum(earnings_micros) as earnings from event_rollup_deltas where share_id is not null
  group by price_id, partner_id, share_id`;

/** The fold: prices first, then earnings, in key order (the upsert's WHERE lets SQLite parse it). */
const FOLD_PRICES = `update campaign_prices set billed = billed + unfolded.units,
    spend_micros = campaign_prices.spend_micros + unfolded.spend
  from (${UNFOLDED_PRICES}) as unfolded
  where campaign_prices.id = unfolded.price_id`;

const FOLD_EARNINGS = `insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
  select price_id, partner_id, share_id, sum(spend_micros), sum(earnings_micros) from event_rollup_deltas
  where share_id is not null
  group by price_id, partner_id, share_id order by price_id, partner_id, share_id
  on conflict (price_id, partner_id, share_id) do update set
    spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
    earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`;

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
  addToSpendCounter: BetterSqlite3.Statement;
  newestDelta: BetterSqlite3.Statement<
    unknown[],
    { id: number | null; folds: string | null; data_version: number }
  >;
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
 * The money in `event_rollup_deltas` as this connection last knew it: exact while no other connection
 * has committed since (`dataVersion`: its appends, its folds) and the table's newest id and the
 * store's count of folds are `newest` and `folds` (a rolled-back transaction of this one lowers the
 * id, or the count if it folded too, which empties the table as a committed fold does). The ids
 * start again from 1 once a fold has emptied the table: a plain rowid, where AUTOINCREMENT cost
 * every append a read and a write of `sqlite_sequence`. Read again from the table otherwise.
 *
 * `totals` holds, for the (price, partner) pairs read since, each share's spend and earnings in
 * all (the `partner_earnings` row plus what was appended): a batch then reads no earnings row it
 * has already read or written. A fold by this connection moves sums from the appended rows to the
 * rows and leaves the totals as they are (`foldChargesSqlite`); anything else that makes the sums
 * stale drops the totals with them.
 */
interface Unfolded {
  newest: number | null;
  folds: string | null;
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
      addToSpendCounter: sqlite.prepare(ADD_TO_SPEND_COUNTER),
      newestDelta: sqlite.prepare<
        unknown[],
        { id: number | null; folds: string | null; data_version: number }
      >(NEWEST_DELTA),
      unfoldedPrices: sqlite.prepare(UNFOLDED_PRICES),
      unfoldedEarnings: sqlite.prepare(UNFOLDED_EARNINGS),
    };
    prepared.set(sqlite, statements);
  }
  return statements;
}

const unfoldedOf = new WeakMap<BetterSqlite3.Database, Unfolded>();

/** `known` if the table is still as it knew it: no other connection committed, nothing rolled back. */
function current(known: Unfolded | undefined, statements: Statements): Unfolded | undefined {
  if (known === undefined) return undefined;
  const table = statements.newestDelta.get();
  return known.newest === (table?.id ?? null) &&
    known.folds === (table?.folds ?? null) &&
    known.dataVersion === Number(table?.data_version)
    ? known
    : undefined;
}

/** This connection's sums of `event_rollup_deltas`, read again if anything but its own appends changed it. */
function unfolded(sqlite: BetterSqlite3.Database, statements: Statements): Unfolded {
  const known = current(unfoldedOf.get(sqlite), statements);
  if (known !== undefined) return known;
  const table = statements.newestDelta.get();
  const fresh: Unfolded = {
    newest: table?.id ?? null,
    folds: table?.folds ?? null,
    dataVersion: Number(table?.data_version),
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
function addTo(
  sums: Map<string, UnfoldedShares>,
  key: string,
  shareId: number,
  spend: number,
  earnings: number,
): void {
  const shares: UnfoldedShares = sums.get(key) ?? noShares();
  const share = shares.get(shareId) ?? { spend: 0, earnings: 0 };
  share.spend += spend;
  share.earnings += earnings;
  shares.set(shareId, share);
  sums.set(key, shares);
}

/** A rollup row as a batch appends it, with what it charged. */
export interface AppendedRollup {
  priceId: number | null;
  partnerId: number;
  shareId: number | null;
  count: number;
  spend: number;
  earnings: number;
}

/**
 * Keeps this connection's sums right through a batch's appends to `event_rollup_deltas`: call
 * `appending` before its first append, and the function it returns after each with the row's id.
 * Where the connection keeps no sums, or they are no longer the table's, it drops them (they are
 * read again, with the batch's rows, when next needed) and the function does nothing.
 */
export function appendingRollups(
  sqlite: BetterSqlite3.Database,
): ((id: number, row: AppendedRollup) => void) | null {
  const known = current(unfoldedOf.get(sqlite), statementsOf(sqlite));
  if (known === undefined) {
    unfoldedOf.delete(sqlite);
    return null;
  }
  return (id, row) => {
    known.newest = id;
    if (row.priceId === null) return;
    const sums = known.prices.get(row.priceId) ?? { units: 0, spend: 0 };
    sums.units += row.count;
    sums.spend += row.spend;
    known.prices.set(row.priceId, sums);
    if (row.shareId === null) return;
    const key = pairKey(row.priceId, row.partnerId);
    addTo(known.earnings, key, row.shareId, row.spend, row.earnings);
    if (known.totals.has(key)) addTo(known.totals, key, row.shareId, row.spend, row.earnings);
  };
}

/**
 * Adds what batches charged in `event_rollup_deltas` to `campaign_prices` and `partner_earnings`,
 * inside the caller's transaction, which empties the table next (`foldRollupsSqlite`).
 */
export function foldChargesSqlite(sqlite: BetterSqlite3.Database): void {
  const known = unfolded(sqlite, statementsOf(sqlite));
  sqlite.prepare(FOLD_PRICES).run();
  sqlite.prepare(FOLD_EARNINGS).run();
  known.folds = sqlite.prepare<[], { value: string }>(COUNT_FOLD).get()?.value ?? null;
  // Nothing appended any more once the table is emptied, all of it in the rows: the totals stay
  // what they were.
  known.newest = null;
  known.prices = new Map();
  known.earnings = new Map();
  if (known.totals.size > MAX_TOTALS) known.totals = new Map();
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

    // Nothing to write: the batch's rollup rows carry its charges, and `appendingRollups` added
    // them to this connection's sums as they were appended.
    addCharges: () => Promise.resolve(),
  };
}
