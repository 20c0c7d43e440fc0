// What a batch's billable events cost (D18) and the budgets they are held to, settled inside the
// batch's commit. Part of the batch write of events.ts: functions over a StoreContext.
import { addMicros, micros, revenueShareIncrement, type Micros } from '../domain/money.js';
import { billedKind, priceOf, runCost, type Price } from '../domain/prices.js';
import { localDate, startOfThisLocalDay } from '../domain/time-zones.js';
import { REASONS } from '../domain/verdicts.js';
import {
  passedAdvertiserBudget,
  spendAgainstAdvertiser,
  type AdvertiserSpend,
} from './advertiser-budgets.js';
import type { PricePartner, PriceRow, SpendRow } from './charge-rows.js';
import type { StoreContext } from './context.js';
import { settledAs, type TrackedEvent } from './rows.js';

/** A locked campaign as charging needs it: where its days fall, its spend budgets, its advertiser. */
export interface ChargedCampaign {
  advertiserId: number;
  timeZone: string;
  budgetTotal: Micros | null;
  budgetDaily: Micros | null;
  /** Its price in force, where the engine read it with the campaign (`SettlingRow.newest_price`). */
  newestPrice?: PriceRow | null;
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
  const rows = ctx.ledger.chargeRows(ctx.db);
  const prices = new Map<number, PriceInForce>();
  const unread = [...campaigns]
    .filter(([, campaign]) => campaign.newestPrice === undefined)
    .map(([id]) => id);
  const read = [...campaigns.values()].flatMap((campaign) => campaign.newestPrice ?? []);
  for (const row of unread.length === 0 ? read : [...read, ...(await rows.latestPrices(unread))]) {
    const price = priceOf(row.model, row.amountMicros);
    const campaign = campaigns.get(row.campaignId);
    if (price === null || billedKind(price) === null || campaign === undefined) continue;
    prices.set(row.campaignId, {
      advertiserId: campaign.advertiserId,
      timeZone: campaign.timeZone,
      budgetTotal: campaign.budgetTotal,
      budgetDaily: campaign.budgetDaily,
      id: row.id,
      campaignId: row.campaignId,
      price,
      billed: row.billed,
      charged: 0,
      cost: 0 as Micros,
      spent: new Map(),
    });
  }
  const budgeted = [...prices.values()].filter(hasBudget);
  if (budgeted.length === 0) return prices;
  const days = new Set(['total']);
  for (const event of events) {
    const charge = prices.get(event.campaignId);
    if (charge !== undefined && charge.budgetDaily !== null)
      days.add(localDate(event.occurredAt, charge.timeZone));
  }
  const counters = await rows.spendCounters(
    budgeted.map((p) => p.campaignId),
    [...days],
  );
  for (const row of counters) prices.get(row.campaignId)?.spent.set(row.day, row.spendMicros);
  return prices;
}

/**
 * Whether the campaign has a spend budget of its own. Only such a campaign has spend counters
 * (`campaign_counters.spend_micros`): they are what its budgets are checked against, and a batch
 * writes them for no other campaign (two rows a campaign a batch, for nothing, cost the write path
 * a fifth of its speed). Setting a budget fills them from the spend so far (`fillSpendCounters`).
 */
function hasBudget(campaign: ChargedCampaign): boolean {
  return campaign.budgetTotal !== null || campaign.budgetDaily !== null;
}

/**
 * Sets a campaign's spend counters from its spend so far, when it has a budget: its whole flight
 * (what its prices were charged) and its local day at `now` (its rollups since local midnight).
 * Called as a budget or a time zone is set, in the same transaction: batches write the counters only
 * while the campaign has a budget (`hasBudget`), so a budget set later starts from the real spend.
 */
export async function fillSpendCounters(ctx: StoreContext, campaignId: number, now: number): Promise<void> {
  const campaign = await ctx.db
    .selectFrom('campaigns')
    .select(['time_zone', 'budget_total_micros', 'budget_daily_micros'])
    .where('id', '=', campaignId)
    .executeTakeFirst();
  if (
    campaign === undefined ||
    (campaign.budget_total_micros === null && campaign.budget_daily_micros === null)
  )
    return;
  const total = await ctx.db
    .selectFrom('campaign_prices_live')
    .select((eb) => eb.fn.sum<string | number | null>('spend_micros').as('spend'))
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  const today = await ctx.db
    .selectFrom('event_rollups_live')
    .select((eb) => eb.fn.sum<string | number | null>('spend_micros').as('spend'))
    .where('campaign_id', '=', campaignId)
    .where('minute', '>=', startOfThisLocalDay(now, campaign.time_zone))
    .executeTakeFirst();
  await ctx.db
    .insertInto('campaign_counters')
    .values(
      [
        ['total', total?.spend],
        [localDate(now, campaign.time_zone), today?.spend],
      ].map(([day, spend]) => ({
        campaign_id: campaignId,
        day: day as string,
        impressions: 0,
        clicks: 0,
        spend_micros: micros(spend ?? 0),
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['campaign_id', 'day'])
        .doUpdateSet((eb) => ({ spend_micros: eb.ref('excluded.spend_micros') })),
    )
    .execute();
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
      return settledAs(event, 'invalid', REASONS.pastBudget, 0, 0);
    const advertiser = advertisers.get(charge.advertiserId);
    if (advertiser !== undefined) {
      if (passedAdvertiserBudget(advertiser, event.occurredAt, cost, billingTimeZone) !== null)
        return settledAs(event, 'invalid', REASONS.pastAdvertiserBudget, 0, 0);
      spendAgainstAdvertiser(advertiser, event.occurredAt, cost, billingTimeZone);
    }
    charge.charged++;
    charge.cost = addMicros(charge.cost, cost);
    add(charge, 'total', cost);
    if (day !== null) add(charge, day, cost);
    const share = shareOf(book, event);
    return settledAs(
      event,
      event.verdict,
      event.reason,
      cost,
      share === undefined ? 0 : earn(book, charge.id, share, event, cost),
      charge.id,
      share?.id ?? null,
    );
  });
}

/** The partner's revenue share in force at the event: the newest started by then, if any. */
function shareOf(book: EarningsBook, event: TrackedEvent): ShareInForce | undefined {
  return book.shares.get(event.partnerId)?.find((candidate) => candidate.from <= event.occurredAt);
}

/**
 * What a charged event earns its partner under `share`, the share in force at the event, with the
 * no-loss rule over the spend of its (price, partner, share).
 */
function earn(
  book: EarningsBook,
  priceId: number,
  share: ShareInForce,
  event: TrackedEvent,
  cost: Micros,
): Micros {
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
  counter.addedUnits = (counter.addedUnits ?? 0) + 1;
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
  /** What the batch charged under it: units, their spend, the partner's earnings. */
  addedUnits?: number;
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
  const rows = ctx.ledger.chargeRows(ctx.db);
  const partners = [...new Set(priced.map((event) => event.partnerId))];
  const newest = Math.max(...priced.map((event) => event.occurredAt));
  for (const row of await rows.revenueShares(partners, newest)) {
    const list = book.shares.get(row.partnerId) ?? [];
    list.push({ id: row.id, from: row.effectiveFrom, basisPoints: row.basisPoints });
    book.shares.set(row.partnerId, list);
  }
  if (book.shares.size === 0) return book;
  const pairs = new Map<string, PricePartner>();
  for (const event of priced) {
    const priceId = (prices.get(event.campaignId) as PriceInForce).id;
    if (book.shares.has(event.partnerId))
      pairs.set(`${priceId}:${event.partnerId}`, { priceId, partnerId: event.partnerId });
  }
  for (const row of await rows.earningsCounters([...pairs.values()])) {
    const counter = {
      priceId: row.priceId,
      partnerId: row.partnerId,
      shareId: row.shareId,
      spend: row.spendMicros,
      earnings: row.earningsMicros,
    };
    book.counters.set(`${counter.priceId}:${counter.partnerId}:${counter.shareId}`, counter);
  }
  return book;
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
 * Records what the batch charged: the units and spend of each price in force, the spend and
 * earnings of each (price, partner, share) in `book`, and each campaign's spend counters (its whole
 * flight and each local day), which its budgets read. Returns the campaigns whose budget is now
 * spent: those the next billable event would take past it.
 */
export async function recordCharges(
  ctx: StoreContext,
  stored: readonly TrackedEvent[],
  prices: ReadonlyMap<number, PriceInForce>,
  book: EarningsBook,
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
    book,
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
    else if (
      charge.budgetDaily !== null &&
      passes(charge, localDate(at, charge.timeZone), charge.budgetDaily, next)
    )
      reached.daily.push({ campaignId: charge.campaignId, at });
  }
  return reached;
}

/** The reasons of a billable event that a budget kept from being charged. */
const PAST_BUDGET: readonly (string | null)[] = [REASONS.pastBudget, REASONS.pastAdvertiserBudget];

/**
 * Adds the batch's charges to their prices' counts and their partners' earnings and, for campaigns
 * with a budget, to their spend counters (the whole flight and each local day).
 */
async function countCharges(
  ctx: StoreContext,
  charged: readonly PriceInForce[],
  book: EarningsBook,
  byCampaign: ReadonlyMap<number, readonly TrackedEvent[]>,
): Promise<void> {
  if (charged.length === 0) return;
  const rows = ctx.ledger.chargeRows(ctx.db);
  await rows.addCharges(
    charged.map((charge) => ({ priceId: charge.id, units: charge.charged, costMicros: charge.cost })),
    [...book.counters.values()].flatMap((counter) =>
      counter.addedUnits === undefined
        ? []
        : [
            {
              priceId: counter.priceId,
              partnerId: counter.partnerId,
              shareId: counter.shareId,
              units: counter.addedUnits,
              spendMicros: counter.addedSpend ?? (0 as Micros),
              earningsMicros: counter.addedEarnings ?? (0 as Micros),
            },
          ],
    ),
  );
  const counters: SpendRow[] = [];
  for (const charge of charged.filter(hasBudget)) {
    const byDay = new Map<string, Micros>([['total', charge.cost]]);
    for (const event of byCampaign.get(charge.campaignId) ?? []) {
      if (!event.costMicros) continue;
      const day = localDate(event.occurredAt, charge.timeZone);
      byDay.set(day, addMicros(byDay.get(day) ?? (0 as Micros), micros(event.costMicros)));
    }
    for (const [day, spend] of byDay)
      counters.push({ campaignId: charge.campaignId, day, spendMicros: spend });
  }
  await rows.addToSpendCounters(counters);
}
