// The rows a batch's commit reads and adds to when it charges its events (D18, `charges.ts`): the
// prices in force, the campaigns' spend counters, the partners' revenue shares and their earnings
// counters. How they are read and written is the engine's (`EventLedger.chargeRows`): PostgreSQL
// here, a few multi-row statements per batch, as every statement is a round trip; SQLite in
// `charge-rows-sqlite.ts`, prepared statements row by row, as its statements cost no round trip
// and a multi-row statement of a new size is compiled anew.
import { sql } from 'kysely';
import type { Micros } from '../domain/money.js';
import type { Db } from './schema.js';

/** The newest `campaign_prices` row of a campaign: the price in force, and the units billed at it. */
export interface PriceRow {
  id: number;
  campaignId: number;
  /** Both null: the campaign was made unpriced (a house campaign) from then on. */
  model: string | null;
  amountMicros: number | null;
  billed: number;
}

/** A campaign's spend on one counter: its whole flight ('total') or a local date. */
export interface SpendRow {
  campaignId: number;
  day: string;
  spendMicros: Micros;
}

/** One revenue share of a partner: from `effectiveFrom` on, `basisPoints` of each cost. */
export interface ShareRow {
  id: number;
  partnerId: number;
  effectiveFrom: number;
  basisPoints: number;
}

/** The spend and earnings of one (price, partner, share). */
export interface EarningsRow {
  priceId: number;
  partnerId: number;
  shareId: number;
  spendMicros: Micros;
  earningsMicros: Micros;
}

/** What a batch charged at a price to a partner under a share: its units, spend and earnings. */
export interface EarningsCharge extends EarningsRow {
  units: number;
}

/** A price in force and a partner whose events the batch charged at it. */
export interface PricePartner {
  priceId: number;
  partnerId: number;
}

/** What a batch charged at one price: its units, and their cost. */
export interface PriceCharge {
  priceId: number;
  units: number;
  costMicros: Micros;
}

/**
 * The money rows of one batch's commit, read and written inside its transaction, under the locks of
 * its campaigns (a price's rows and a campaign's counters are only written by a batch holding that
 * campaign's lock).
 */
export interface ChargeRows {
  /** The price in force of each of these campaigns that has one. */
  latestPrices(campaignIds: readonly number[]): Promise<PriceRow[]>;
  /** The spend counters of these campaigns on these days ('total' or local dates) that exist. */
  spendCounters(campaignIds: readonly number[], days: readonly string[]): Promise<SpendRow[]>;
  /** The revenue shares of these partners started by `until`, each partner's newest first. */
  revenueShares(partnerIds: readonly number[], until: number): Promise<ShareRow[]>;
  /** The earnings counters of these (price, partner) pairs that exist, every share of each. */
  earningsCounters(pairs: readonly PricePartner[]): Promise<EarningsRow[]>;
  /**
   * Adds what the batch charged: the units and cost at each price (`prices`), and the spend and
   * earnings of each (price, partner, share) (`earnings`, counters created where they do not exist),
   * whose units are among their price's. SQLite writes nothing here: each event's price and share
   * travel in the rollup rows its ledger appends (`event-ledger-sqlite.ts`), which the fold adds to
   * those counters; a charge that did not travel there would be lost.
   */
  addCharges(prices: readonly PriceCharge[], earnings: readonly EarningsCharge[]): Promise<void>;
  /** Adds spend to campaigns' counters, creating those that do not exist yet. */
  addToSpendCounters(rows: readonly SpendRow[]): Promise<void>;
}

/** The money rows through Kysely, a statement for each whatever the number of rows (PostgreSQL). */
export function sqlChargeRows(db: Db): ChargeRows {
  return {
    async latestPrices(campaignIds) {
      if (campaignIds.length === 0) return [];
      const rows = await db
        .selectFrom('campaign_prices')
        .select(['id', 'campaign_id', 'model', 'amount_micros', 'billed'])
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('campaign_prices')
            .select((s) => s.fn.max('id').as('id'))
            .where('campaign_id', 'in', campaignIds)
            .groupBy('campaign_id'),
        )
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        campaignId: Number(row.campaign_id),
        model: row.model,
        amountMicros: row.amount_micros === null ? null : Number(row.amount_micros),
        billed: Number(row.billed),
      }));
    },

    async spendCounters(campaignIds, days) {
      if (campaignIds.length === 0 || days.length === 0) return [];
      const rows = await db
        .selectFrom('campaign_counters')
        .select(['campaign_id', 'day', 'spend_micros'])
        .where('campaign_id', 'in', campaignIds)
        .where('day', 'in', days)
        .execute();
      return rows.map((row) => ({
        campaignId: Number(row.campaign_id),
        day: row.day,
        spendMicros: Number(row.spend_micros) as Micros,
      }));
    },

    async revenueShares(partnerIds, until) {
      if (partnerIds.length === 0) return [];
      const rows = await db
        .selectFrom('partner_revenue_shares')
        .select(['id', 'partner_id', 'effective_from', 'basis_points'])
        .where('partner_id', 'in', partnerIds)
        .where('effective_from', '<=', until)
        .orderBy('partner_id')
        .orderBy('effective_from', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        partnerId: Number(row.partner_id),
        effectiveFrom: Number(row.effective_from),
        basisPoints: Number(row.basis_points),
      }));
    },

    async earningsCounters(pairs) {
      if (pairs.length === 0) return [];
      // The pairs' prices and partners crossed: a few rows more than asked for, in one statement.
      const rows = await db
        .selectFrom('partner_earnings')
        .select(['price_id', 'partner_id', 'share_id', 'spend_micros', 'earnings_micros'])
        .where('price_id', 'in', [...new Set(pairs.map((pair) => pair.priceId))])
        .where('partner_id', 'in', [...new Set(pairs.map((pair) => pair.partnerId))])
        .execute();
      return rows.map((row) => ({
        priceId: Number(row.price_id),
        partnerId: Number(row.partner_id),
        shareId: Number(row.share_id),
        spendMicros: Number(row.spend_micros) as Micros,
        earningsMicros: Number(row.earnings_micros) as Micros,
      }));
    },

    async addToSpendCounters(rows) {
      if (rows.length === 0) return;
      await db
        .insertInto('campaign_counters')
        .values(
          rows.map((row) => ({
            campaign_id: row.campaignId,
            day: row.day,
            impressions: 0,
            clicks: 0,
            spend_micros: row.spendMicros,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['campaign_id', 'day']).doUpdateSet((eb) => ({
            spend_micros: eb('campaign_counters.spend_micros', '+', eb.ref('excluded.spend_micros')),
          })),
        )
        .execute();
    },

    async addCharges(charges, earnings) {
      if (charges.length === 0) return;
      // One statement for every price: a batch touches hundreds of campaigns, and a statement each
      // was a round trip each.
      const whenId = (value: (charge: PriceCharge) => number) =>
        sql.join(
          charges.map((charge) => sql`when ${charge.priceId} then cast(${value(charge)} as bigint)`),
          sql` `,
        );
      await sql`update campaign_prices set
          billed = billed + case id ${whenId((charge) => charge.units)} end,
          spend_micros = spend_micros + case id ${whenId((charge) => charge.costMicros)} end
        where id in (${sql.join(charges.map((charge) => charge.priceId))})`.execute(db);
      if (earnings.length === 0) return;
      await db
        .insertInto('partner_earnings')
        .values(
          earnings.map((row) => ({
            price_id: row.priceId,
            partner_id: row.partnerId,
            share_id: row.shareId,
            spend_micros: row.spendMicros,
            earnings_micros: row.earningsMicros,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['price_id', 'partner_id', 'share_id']).doUpdateSet((eb) => ({
            spend_micros: eb('partner_earnings.spend_micros', '+', eb.ref('excluded.spend_micros')),
            earnings_micros: eb('partner_earnings.earnings_micros', '+', eb.ref('excluded.earnings_micros')),
          })),
        )
        .execute();
    },
  };
}
