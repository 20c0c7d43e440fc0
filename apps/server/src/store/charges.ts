// What a batch's billable events cost (D18) and the budgets they are held to, settled inside the
// batch's commit. Part of the batch write of events.ts: functions over a StoreContext.
import { sql } from 'kysely';
import { addMicros, micros, revenueShareIncrement, type Micros } from '../domain/money.js';
import { billedKind, priceOf, runCost, type Price } from '../domain/prices.js';
import { localDate } from '../domain/time-zones.js';
import { REASONS } from '../domain/verdicts.js';
import {
  passedAdvertiserBudget,
  spendAgainstAdvertiser,
  type AdvertiserSpend,
} from './advertiser-budgets.js';
import type { StoreContext } from './context.js';
import type { TrackedEvent } from './rows.js';

/** A locked campaign as charging needs it: where its days fall, its spend budgets, its advertiser. */
export interface ChargedCampaign {
  advertiserId: number;
  timeZone: string;
  budgetTotal: Micros | null;
  budgetDaily: Micros | null;
}

/**
 * A campaign's price in force as its locked batch found it (the newest row of `campaign_prices`),
 * with the units billed at it so far, its spend so far against its budgets, and what this batch
 * charges.
 */
export interface PriceInForce extends ChargedCampaign {
  /** The `campaign_prices` row. */
  id: number;
  campaignId: number;
  price: Price;
  /** Billable units charged at this price before the batch, then with the batch's. */
  billed: number;
  /** Units and micros this batch charges. */
  charged: number;
  cost: Micros;
  /** Spend counters ('total' and local dates), as stored plus the batch's charges so far. */
  spent: Map<string, Micros>;
}

/**
 * The prices in force that charge per event (`cpm`, `cpc`) of `campaigns` (locked by the batch, so
 * no other batch charges them until it commits), by campaign, with their spend counters for the
 * whole flight and for the local days of `events`.
 */
export async function pricesInForce(
  ctx: StoreContext,
  campaigns: ReadonlyMap<number, ChargedCampaign>,
  events: readonly TrackedEvent[],
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
      ...campaign,
      id: Number(row.id),
      campaignId,
      price,
      billed: Number(row.billed),
      charged: 0,
      cost: 0 as Micros,
      spent: new Map(),
    });
  }
  const budgeted = [...prices.values()].filter((p) => p.budgetTotal !== null || p.budgetDaily !== null);
  if (budgeted.length === 0) return prices;
  const days = new Set(['total']);
  for (const event of events) {
    const charge = prices.get(event.campaignId);
    if (charge !== undefined && charge.budgetDaily !== null)
      days.add(localDate(event.occurredAt, charge.timeZone));
  }
  const counters = await ctx.db
    .selectFrom('campaign_counters')
    .select(['campaign_id', 'day', 'spend_micros'])
    .where(
      'campaign_id',
      'in',
      budgeted.map((p) => p.campaignId),
    )
    .where('day', 'in', [...days])
    .execute();
  for (const row of counters)
    prices.get(Number(row.campaign_id))?.spent.set(row.day, micros(row.spend_micros));
  return prices;
}

/** The advertisers with a budget the batch charges (locked), and the zone their months are in. */
export interface AdvertiserBudgets {
  advertisers: ReadonlyMap<number, AdvertiserSpend>;
  billingTimeZone: string;
}

/**
 * The batch as the ledger settled it, each billable event given its cost: counted, of the kind its
 * campaign's price charges, priced in order from the units billed before it (the n-th impression at
 * a CPM costs F(n) − F(n − 1), so every 1,000 cost exactly the CPM). An event whose cost would take
 * its campaign's spend past a budget (total, or daily in its time zone) is stored `invalid`,
 * `past budget`, and one whose cost would take its advertiser's spend past a budget (total, or
 * monthly in the billing time zone) `invalid`, `past advertiser budget`: either is charged nothing,
 * so spend never passes a budget and stops within one event's price of it (the most restrictive
 * wins). Every other event costs 0. Called once replays are known, so a duplicate never takes a unit.
 */
export function chargeEvents(
  stored: readonly TrackedEvent[],
  prices: ReadonlyMap<number, PriceInForce>,
  book: EarningsBook,
  { advertisers, billingTimeZone }: AdvertiserBudgets,
): TrackedEvent[] {
  return stored.map((event) => {
    const charge = prices.get(event.campaignId);
    if (charge === undefined || event.verdict !== 'counted' || billedKind(charge.price) !== event.kind)
      return event;
    const cost = runCost(charge.price, charge.billed + charge.charged, 1);
    const day = charge.budgetDaily === null ? null : localDate(event.occurredAt, charge.timeZone);
    if (
      passes(charge, 'total', charge.budgetTotal, cost) ||
      (day !== null && passes(charge, day, charge.budgetDaily, cost))
    )
      return { ...event, verdict: 'invalid', reason: REASONS.pastBudget, costMicros: 0 };
    const advertiser = advertisers.get(charge.advertiserId);
    if (advertiser !== undefined) {
      if (passedAdvertiserBudget(advertiser, event.occurredAt, cost, billingTimeZone) !== null)
        return { ...event, verdict: 'invalid', reason: REASONS.pastAdvertiserBudget, costMicros: 0 };
      spendAgainstAdvertiser(advertiser, event.occurredAt, cost, billingTimeZone);
    }
    charge.charged++;
    charge.cost = addMicros(charge.cost, cost);
    add(charge, 'total', cost);
    if (day !== null) add(charge, day, cost);
    return { ...event, costMicros: cost, earningsMicros: earn(book, charge.id, event, cost) };
  });
}

/**
 * What a charged event earns its partner: the share in force at the event (the newest started by
 * then), with the no-loss rule over the spend of its (price, partner, share); 0 without a share.
 */
function earn(book: EarningsBook, priceId: number, event: TrackedEvent, cost: Micros): Micros {
  const share = book.shares.get(event.partnerId)?.find((candidate) => candidate.from <= event.occurredAt);
  if (share === undefined) return 0 as Micros;
  const key = `${priceId}:${event.partnerId}:${share.id}`;
  let counter = book.counters.get(key);
  if (counter === undefined) {
    counter = {
      priceId,
      partnerId: event.partnerId,
      shareId: share.id,
      spend: 0 as Micros,
      earnings: 0 as Micros,
    };
    book.counters.set(key, counter);
  }
  const earned = revenueShareIncrement(share.basisPoints, counter.spend, cost);
  counter.spend = addMicros(counter.spend, cost);
  counter.earnings = addMicros(counter.earnings, earned);
  counter.addedSpend = addMicros(counter.addedSpend ?? (0 as Micros), cost);
  counter.addedEarnings = addMicros(counter.addedEarnings ?? (0 as Micros), earned);
  return earned;
}

/** A partner's revenue share from an instant on. */
interface ShareInForce {
  id: number;
  from: number;
  basisPoints: number;
}

/** The spend and earnings of one (price, partner, share), as stored and with the batch's. */
interface EarningsCounter {
  priceId: number;
  partnerId: number;
  shareId: number;
  spend: Micros;
  earnings: Micros;
  addedSpend?: Micros;
  addedEarnings?: Micros;
}

/** What pricing a batch needs to give each charged event its partner's earnings. */
export interface EarningsBook {
  /** Each partner's shares started by the batch's newest event, newest first. */
  shares: Map<number, ShareInForce[]>;
  /** By `price:partner:share`. */
  counters: Map<string, EarningsCounter>;
}

/**
 * The revenue shares of the partners of the batch's priced events, and their earnings counters under
 * the prices in force (rows written only by batches holding the price's campaign lock, which this
 * batch holds).
 */
export async function earningsBook(
  ctx: StoreContext,
  prices: ReadonlyMap<number, PriceInForce>,
  events: readonly TrackedEvent[],
): Promise<EarningsBook> {
  const book: EarningsBook = { shares: new Map(), counters: new Map() };
  const priced = events.filter((event) => prices.has(event.campaignId));
  if (priced.length === 0) return book;
  const partners = [...new Set(priced.map((event) => event.partnerId))];
  const newest = Math.max(...priced.map((event) => event.occurredAt));
  const shares = await ctx.db
    .selectFrom('partner_revenue_shares')
    .select(['id', 'partner_id', 'effective_from', 'basis_points'])
    .where('partner_id', 'in', partners)
    .where('effective_from', '<=', newest)
    .orderBy('partner_id')
    .orderBy('effective_from', 'desc')
    .orderBy('id', 'desc')
    .execute();
  for (const row of shares) {
    const partnerId = Number(row.partner_id);
    const list = book.shares.get(partnerId) ?? [];
    list.push({
      id: Number(row.id),
      from: Number(row.effective_from),
      basisPoints: Number(row.basis_points),
    });
    book.shares.set(partnerId, list);
  }
  if (book.shares.size === 0) return book;
  const counters = await ctx.db
    .selectFrom('partner_earnings')
    .select(['price_id', 'partner_id', 'share_id', 'spend_micros', 'earnings_micros'])
    .where(
      'price_id',
      'in',
      [...prices.values()].map((price) => price.id),
    )
    .where('partner_id', 'in', [...book.shares.keys()])
    .execute();
  for (const row of counters) {
    const counter = {
      priceId: Number(row.price_id),
      partnerId: Number(row.partner_id),
      shareId: Number(row.share_id),
      spend: micros(row.spend_micros),
      earnings: micros(row.earnings_micros),
    };
    book.counters.set(`${counter.priceId}:${counter.partnerId}:${counter.shareId}`, counter);
  }
  return book;
}

/** Adds the batch's spend and earnings to each (price, partner, share) it charged. */
export async function recordEarnings(ctx: StoreContext, book: EarningsBook): Promise<void> {
  const rows = [...book.counters.values()]
    .filter((counter) => counter.addedSpend !== undefined)
    .map((counter) => ({
      price_id: counter.priceId,
      partner_id: counter.partnerId,
      share_id: counter.shareId,
      spend_micros: counter.addedSpend ?? (0 as Micros),
      earnings_micros: counter.addedEarnings ?? (0 as Micros),
    }));
  if (rows.length === 0) return;
  await ctx.db
    .insertInto('partner_earnings')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['price_id', 'partner_id', 'share_id']).doUpdateSet((eb) => ({
        spend_micros: eb('partner_earnings.spend_micros', '+', eb.ref('excluded.spend_micros')),
        earnings_micros: eb('partner_earnings.earnings_micros', '+', eb.ref('excluded.earnings_micros')),
      })),
    )
    .execute();
}

/** Whether spending `cost` more on counter `key` would pass `budget`. */
function passes(charge: PriceInForce, key: string, budget: Micros | null, cost: Micros): boolean {
  return budget !== null && addMicros(charge.spent.get(key) ?? (0 as Micros), cost) > budget;
}

function add(charge: PriceInForce, key: string, cost: Micros): void {
  charge.spent.set(key, addMicros(charge.spent.get(key) ?? (0 as Micros), cost));
}

/**
 * Campaigns whose budget the batch spent, as far as the next billable event would pass it, each with
 * the time of its latest event in the batch (the day a daily budget holds is that event's).
 */
export interface BudgetsReached {
  /** Total budget: no further event can be charged. */
  total: { campaignId: number; at: number }[];
  daily: { campaignId: number; at: number }[];
  /**
   * Each advertiser with a budget whose campaigns the batch charged, with the time of its latest
   * billable event and the dearest next event of its campaigns in the batch: its budget is spent when
   * that would pass it.
   */
  advertisers: Map<number, { at: number; next: Micros }>;
}

/**
 * Records what the batch charged: the units and spend of each price in force, and each campaign's
 * spend counters (its whole flight and each local day), which its budgets read. Returns the
 * campaigns whose budget is now spent: those the next billable event would take past it.
 */
export async function recordCharges(
  ctx: StoreContext,
  stored: readonly TrackedEvent[],
  prices: ReadonlyMap<number, PriceInForce>,
): Promise<BudgetsReached> {
  const reached: BudgetsReached = { total: [], daily: [], advertisers: new Map() };
  const byCampaign = new Map<number, TrackedEvent[]>();
  for (const event of stored) {
    if (!prices.has(event.campaignId)) continue;
    const mine = byCampaign.get(event.campaignId);
    if (mine) mine.push(event);
    else byCampaign.set(event.campaignId, [event]);
  }
  await countCharges(
    ctx,
    [...prices.values()].filter((charge) => charge.charged > 0),
    byCampaign,
  );
  for (const charge of prices.values()) {
    // The campaign's latest billable event of the batch, charged or not: its day is the one held.
    const last = byCampaign
      .get(charge.campaignId)
      ?.findLast(
        (event) =>
          event.kind === billedKind(charge.price) &&
          (event.verdict === 'counted' || PAST_BUDGET.includes(event.reason)),
      );
    if (last === undefined) continue;
    const next = runCost(charge.price, charge.billed + charge.charged, 1);
    const at = last.occurredAt;
    const advertiser = reached.advertisers.get(charge.advertiserId);
    reached.advertisers.set(charge.advertiserId, {
      at: Math.max(at, advertiser?.at ?? at),
      next: next > (advertiser?.next ?? 0) ? next : (advertiser?.next ?? next),
    });
    if (passes(charge, 'total', charge.budgetTotal, next))
      reached.total.push({ campaignId: charge.campaignId, at });
    else if (passes(charge, localDate(at, charge.timeZone), charge.budgetDaily, next))
      reached.daily.push({ campaignId: charge.campaignId, at });
  }
  return reached;
}

/** The reasons of a billable event that a budget kept from being charged. */
const PAST_BUDGET: readonly (string | null)[] = [REASONS.pastBudget, REASONS.pastAdvertiserBudget];

/**
 * Adds the batch's charges to their prices' counts and to their campaigns' spend counters, in one
 * statement each whatever the number of campaigns: a batch touches hundreds of campaigns, and a
 * statement each was a round trip each on PostgreSQL.
 */
async function countCharges(
  ctx: StoreContext,
  charged: readonly PriceInForce[],
  byCampaign: ReadonlyMap<number, readonly TrackedEvent[]>,
): Promise<void> {
  if (charged.length === 0) return;
  const whenId = (value: (charge: PriceInForce) => number) =>
    sql.join(
      charged.map((charge) => sql`when ${charge.id} then cast(${value(charge)} as bigint)`),
      sql` `,
    );
  await sql`update campaign_prices set
      billed = billed + case id ${whenId((charge) => charge.charged)} end,
      spend_micros = spend_micros + case id ${whenId((charge) => charge.cost)} end
    where id in (${sql.join(charged.map((charge) => charge.id))})`.execute(ctx.db);
  const counters: { campaign_id: number; day: string; impressions: 0; clicks: 0; spend_micros: Micros }[] =
    [];
  for (const charge of charged) {
    const byDay = new Map<string, Micros>([['total', charge.cost]]);
    for (const event of byCampaign.get(charge.campaignId) ?? []) {
      if (!event.costMicros) continue;
      const day = localDate(event.occurredAt, charge.timeZone);
      byDay.set(day, addMicros(byDay.get(day) ?? (0 as Micros), micros(event.costMicros)));
    }
    for (const [day, spend] of byDay)
      counters.push({ campaign_id: charge.campaignId, day, impressions: 0, clicks: 0, spend_micros: spend });
  }
  await ctx.db
    .insertInto('campaign_counters')
    .values(counters)
    .onConflict((oc) =>
      oc.columns(['campaign_id', 'day']).doUpdateSet((eb) => ({
        spend_micros: eb('campaign_counters.spend_micros', '+', eb.ref('excluded.spend_micros')),
      })),
    )
    .execute();
}
