// What a batch's billable events cost (D18), settled inside the batch's commit. Part of the batch
// write of events.ts: functions over a StoreContext.
import { addMicros, micros, type Micros } from '../domain/money.js';
import { billedKind, priceOf, runCost, type Price } from '../domain/prices.js';
import { localDate } from '../domain/time-zones.js';
import type { StoreContext } from './context.js';
import type { TrackedEvent } from './rows.js';

/**
 * A campaign's price in force as its locked batch found it (the newest row of `campaign_prices`),
 * with the units billed at it so far, and what this batch charges at it.
 */
export interface PriceInForce {
  /** The `campaign_prices` row. */
  id: number;
  campaignId: number;
  timeZone: string;
  price: Price;
  /** Billable units charged at this price before the batch. */
  billed: number;
  /** Units and micros this batch charges. */
  charged: number;
  cost: Micros;
}

/**
 * The prices in force that charge per event (`cpm`, `cpc`) of `campaigns` (locked by the batch, so
 * no other batch charges them until it commits), by campaign.
 */
export async function pricesInForce(
  ctx: StoreContext,
  campaigns: ReadonlyMap<number, { timeZone: string }>,
): Promise<Map<number, PriceInForce>> {
  if (campaigns.size === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('campaign_prices')
    .select(['id', 'campaign_id', 'model', 'amount_micros', 'billed'])
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('campaign_prices')
        .select((s) => s.fn.max('id').as('id'))
        .where('campaign_id', 'in', [...campaigns.keys()])
        .groupBy('campaign_id'),
    )
    .execute();
  const prices = new Map<number, PriceInForce>();
  for (const row of rows) {
    const price = priceOf(row.model, row.amount_micros);
    const campaignId = Number(row.campaign_id);
    const campaign = campaigns.get(campaignId);
    if (price === null || billedKind(price) === null || campaign === undefined) continue;
    prices.set(campaignId, {
      id: Number(row.id),
      campaignId,
      timeZone: campaign.timeZone,
      price,
      billed: Number(row.billed),
      charged: 0,
      cost: 0 as Micros,
    });
  }
  return prices;
}

/**
 * The batch as the ledger settled it, each billable event given its cost: counted, of the kind its
 * campaign's price charges, priced in order from the units billed before it (the n-th impression at
 * a CPM costs F(n) − F(n − 1), so every 1,000 cost exactly the CPM). Every other event costs 0.
 * Called once replays are known, so a duplicate never takes a unit.
 */
export function chargeEvents(
  stored: readonly TrackedEvent[],
  prices: ReadonlyMap<number, PriceInForce>,
): TrackedEvent[] {
  return stored.map((event) => {
    const charge = prices.get(event.campaignId);
    if (charge === undefined || event.verdict !== 'counted' || billedKind(charge.price) !== event.kind)
      return event;
    const cost = runCost(charge.price, charge.billed + charge.charged, 1);
    charge.charged++;
    charge.cost = addMicros(charge.cost, cost);
    return { ...event, costMicros: cost };
  });
}

/**
 * Records what the batch charged: the units and spend of each price in force, and each campaign's
 * spend counters (its whole flight and each local day), which its budgets read.
 */
export async function recordCharges(
  ctx: StoreContext,
  stored: readonly TrackedEvent[],
  prices: ReadonlyMap<number, PriceInForce>,
): Promise<void> {
  for (const charge of prices.values()) {
    if (charge.charged === 0) continue;
    await ctx.db
      .updateTable('campaign_prices')
      .set((eb) => ({
        billed: eb('billed', '+', charge.charged),
        spend_micros: eb('spend_micros', '+', charge.cost),
      }))
      .where('id', '=', charge.id)
      .execute();
    const byDay = new Map<string, Micros>([['total', charge.cost]]);
    for (const event of stored) {
      if (event.campaignId !== charge.campaignId || !event.costMicros) continue;
      const day = localDate(event.occurredAt, charge.timeZone);
      byDay.set(day, addMicros(byDay.get(day) ?? (0 as Micros), micros(event.costMicros)));
    }
    for (const [day, spend] of byDay) {
      await ctx.db
        .insertInto('campaign_counters')
        .values({ campaign_id: charge.campaignId, day, impressions: 0, clicks: 0, spend_micros: spend })
        .onConflict((oc) =>
          oc
            .columns(['campaign_id', 'day'])
            .doUpdateSet((eb) => ({ spend_micros: eb('campaign_counters.spend_micros', '+', spend) })),
        )
        .execute();
    }
  }
}
