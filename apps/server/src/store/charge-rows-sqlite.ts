// A batch's money rows on SQLite (`ChargeRows`, charge-rows.ts): prepared once per connection and run
// row by row inside the batch's transaction. A statement costs SQLite no round trip, while Kysely
// building and SQLite compiling a multi-row statement of a size not seen before cost more than the
// rows themselves: the same reason `event-ledger-sqlite.ts` writes events this way.
import type BetterSqlite3 from 'better-sqlite3';
import type { Micros } from '../domain/money.js';
import type { ChargeRows, EarningsRow, ShareRow } from './charge-rows.js';

const LATEST_PRICE = `select id, model, amount_micros, billed from campaign_prices
  where campaign_id = ? order by id desc limit 1`;

const SPEND_COUNTER = `select spend_micros from campaign_counters where campaign_id = ? and day = ?`;

const SHARES = `select id, effective_from, basis_points from partner_revenue_shares
  where partner_id = ? and effective_from <= ? order by effective_from desc, id desc`;

const EARNINGS = `select share_id, spend_micros, earnings_micros from partner_earnings
  where price_id = ? and partner_id = ?`;

const ADD_TO_PRICE = `update campaign_prices set billed = billed + ?, spend_micros = spend_micros + ?
  where id = ?`;

const ADD_TO_SPEND_COUNTER = `insert into campaign_counters (campaign_id, day, impressions, clicks, spend_micros)
  values (?, ?, 0, 0, ?)
  on conflict (campaign_id, day) do update set spend_micros = campaign_counters.spend_micros + excluded.spend_micros`;

const ADD_TO_EARNINGS = `insert into partner_earnings (price_id, partner_id, share_id, spend_micros, earnings_micros)
  values (?, ?, ?, ?, ?)
  on conflict (price_id, partner_id, share_id) do update set
    spend_micros = partner_earnings.spend_micros + excluded.spend_micros,
    earnings_micros = partner_earnings.earnings_micros + excluded.earnings_micros`;

interface Statements {
  latestPrice: BetterSqlite3.Statement<
    unknown[],
    { id: number; model: string | null; amount_micros: number | null; billed: number }
  >;
  spendCounter: BetterSqlite3.Statement<unknown[], { spend_micros: number }>;
  shares: BetterSqlite3.Statement<unknown[], { id: number; effective_from: number; basis_points: number }>;
  earnings: BetterSqlite3.Statement<
    unknown[],
    { share_id: number; spend_micros: number; earnings_micros: number }
  >;
  addToPrice: BetterSqlite3.Statement;
  addToSpendCounter: BetterSqlite3.Statement;
  addToEarnings: BetterSqlite3.Statement;
}

/** Prepared once per connection, on first use (after migrations have created the tables). */
const prepared = new WeakMap<BetterSqlite3.Database, Statements>();

function statementsOf(sqlite: BetterSqlite3.Database): Statements {
  let statements = prepared.get(sqlite);
  if (!statements) {
    statements = {
      latestPrice: sqlite.prepare(LATEST_PRICE),
      spendCounter: sqlite.prepare(SPEND_COUNTER),
      shares: sqlite.prepare(SHARES),
      earnings: sqlite.prepare(EARNINGS),
      addToPrice: sqlite.prepare(ADD_TO_PRICE),
      addToSpendCounter: sqlite.prepare(ADD_TO_SPEND_COUNTER),
      addToEarnings: sqlite.prepare(ADD_TO_EARNINGS),
    };
    prepared.set(sqlite, statements);
  }
  return statements;
}

/** The money rows of a batch on the SQLite connection `sqlite` (its transaction is the batch's). */
export function sqliteChargeRows(sqlite: BetterSqlite3.Database): ChargeRows {
  const statements = statementsOf(sqlite);
  return {
    latestPrices(campaignIds) {
      return Promise.resolve(
        campaignIds.flatMap((campaignId) => {
          const row = statements.latestPrice.get(campaignId);
          if (row === undefined) return [];
          return [
            {
              id: Number(row.id),
              campaignId,
              model: row.model,
              amountMicros: row.amount_micros === null ? null : Number(row.amount_micros),
              billed: Number(row.billed),
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
          if (row !== undefined)
            rows.push({ campaignId, day, spendMicros: Number(row.spend_micros) as Micros });
        }
      return Promise.resolve(rows);
    },

    revenueShares(partnerIds, until) {
      const rows: ShareRow[] = [];
      for (const partnerId of partnerIds)
        for (const row of statements.shares.all(partnerId, until))
          rows.push({
            id: Number(row.id),
            partnerId,
            effectiveFrom: Number(row.effective_from),
            basisPoints: Number(row.basis_points),
          });
      return Promise.resolve(rows);
    },

    earningsCounters(pairs) {
      const rows: EarningsRow[] = [];
      for (const { priceId, partnerId } of pairs)
        for (const row of statements.earnings.all(priceId, partnerId))
          rows.push({
            priceId,
            partnerId,
            shareId: Number(row.share_id),
            spendMicros: Number(row.spend_micros) as Micros,
            earningsMicros: Number(row.earnings_micros) as Micros,
          });
      return Promise.resolve(rows);
    },

    addToPrices(charges) {
      for (const charge of charges)
        statements.addToPrice.run(charge.units, charge.costMicros, charge.priceId);
      return Promise.resolve();
    },

    addToSpendCounters(rows) {
      for (const row of rows) statements.addToSpendCounter.run(row.campaignId, row.day, row.spendMicros);
      return Promise.resolve();
    },

    addToEarnings(rows) {
      for (const row of rows)
        statements.addToEarnings.run(
          row.priceId,
          row.partnerId,
          row.shareId,
          row.spendMicros,
          row.earningsMicros,
        );
      return Promise.resolve();
    },
  };
}
