// Tracked events: a batch stored through the engine's ledger with its caps applied, retention, counts.
// Part of the Store façade (store.ts): functions over a StoreContext.
import { NO_CAPS, REACHED, totalCapReached, type Caps, type Totals } from '../domain/campaigns.js';
import { REASONS } from '../domain/verdicts.js';
import { localDate, startOfNextLocalDay } from '../domain/time-zones.js';
import {
  UnmarkedPrice,
  type EventPartitioning,
  type SettledBatch,
  type SettlingRow,
} from './event-ledger.js';
import type { EventPartitions } from './event-partitions.js';
import type { PriceRow } from './charge-rows.js';
import { micros, type Micros } from '../domain/money.js';
import { PER_EVENT_PRICE_MODELS } from '../domain/prices.js';
import { chargeEvents, earningsBook, pricesInForce, recordCharges } from './charges.js';
import { holdSpentAdvertiser, lockBudgetedAdvertisers, recordAdvertiserSpend } from './advertiser-budgets.js';
import {
  capsOf,
  emptyBatchOutcome,
  settledAs,
  type EventKind,
  type TrackedEvent,
  type BatchOutcome,
} from './rows.js';
import { transact, type StoreContext } from './context.js';
import { appendAudit } from './audit.js';

/**
 * Stores a batch of events atomically: idempotent replays become duplicates, events whose key was
 * used for a different request are refused and left out (`BatchOutcome.refused`), the raw events and
 * their per-minute rollups are written together, and caps are applied to what counts (counters of
 * capped campaigns advance, a total cap completes the campaign, a daily cap holds it until the
 * next local midnight of its time zone). Caps hold (D16): an event that would take a counter past
 * its cap is stored as `invalid`, `past cap`, however many batches and instances race for the last
 * units. Each billable event of a campaign priced per event is given its cost in the same commit,
 * from the price then in force (D18, `charges.ts`). Resolves only once durable.
 */
export async function insertEvents(
  ctx: StoreContext,
  events: readonly TrackedEvent[],
): Promise<BatchOutcome> {
  const effects = emptyBatchOutcome();
  if (events.length === 0) return effects;
  const count = ({ stored, refused }: SettledBatch): void => {
    effects.refused = refused;
    for (const { kind, verdict } of stored) {
      const key = `${kind}:${verdict}`;
      effects.stored.set(key, (effects.stored.get(key) ?? 0) + 1);
    }
    // `stored` is the batch in order without the refused: the replays' positions in the batch.
    const skipped = new Set(refused);
    let next = 0;
    for (let index = 0; index < events.length; index++) {
      if (skipped.has(index)) continue;
      const event = stored[next++];
      if (event?.verdict === 'duplicate') effects.replayed.push(index);
      else if (event?.reason === REASONS.pastBudget || event?.reason === REASONS.pastAdvertiserBudget)
        effects.pastBudget.push(index);
    }
  };
  // A batch with nothing to cap or charge is one statement where the engine's ledger commits it by
  // itself.
  if (
    ctx.ledger.commitsAlone &&
    !ctx.db.isTransaction &&
    !events.some((event) => event.mayHitCap || event.priced)
  ) {
    try {
      count(await ctx.ledger.store(ctx.db, events, null));
      return effects;
    } catch (error) {
      if (!(error instanceof UnmarkedPrice)) throw error;
      // A price the serving index has not learnt yet: taken again as a batch that settles money.
      return insertEvents(
        ctx,
        events.map((event) => ({ ...event, priced: true })),
      );
    }
  }
  await transact(ctx, async (tx) => {
    const settling = settlingCampaignIds(tx, events);
    // Advertisers before campaigns, in every batch: the lock order that keeps batches from deadlocking.
    const advertisers = await lockBudgetedAdvertisers(tx, settling, events);
    const locked = await lockSettledCampaigns(tx, settling);
    const capped = new Map([...locked].filter(([, campaign]) => campaign.hasCaps));
    const judged = await holdCaps(tx, events, capped, effects);
    const prices = await pricesInForce(tx, locked, events);
    const book = await earningsBook(tx, prices, events);
    const settled = await tx.ledger.store(
      tx.db,
      judged,
      prices.size === 0
        ? null
        : (stored) =>
            chargeEvents(stored, prices, book, { advertisers, billingTimeZone: tx.billingTimeZone }),
    );
    count(settled);
    await applyCaps(tx, settled.stored, capped, effects);
    const spent = await recordCharges(tx, settled.stored, prices, book);
    await recordAdvertiserSpend(tx, advertisers);
    for (const [advertiserId, { at, next }] of spent.advertisers) {
      const advertiser = advertisers.get(advertiserId);
      if (advertiser !== undefined && (await holdSpentAdvertiser(tx, advertiser, at, next)))
        effects.advertisersHeld.push(advertiserId);
    }
    for (const { campaignId, at } of spent.total) {
      const campaign = locked.get(campaignId) as SettledCampaign;
      if (campaign.status === 'running' && !effects.completed.includes(campaignId))
        await complete(tx, campaign, at, REACHED.totalBudget, effects);
    }
    for (const { campaignId, at } of spent.daily) {
      if (!effects.completed.includes(campaignId) && !effects.cappedForTheDay.includes(campaignId))
        await holdForTheDay(tx, locked.get(campaignId) as SettledCampaign, at, effects, REACHED.dailyBudget);
    }
  });
  return effects;
}

/**
 * Deletes up to `limit` raw events older than `before` (retention); returns how many. On PostgreSQL
 * only the legacy partition's: the daily ones are dropped whole (`dropExpiredEventPartitions`).
 */
export function pruneEvents(ctx: StoreContext, before: number, limit: number): Promise<number> {
  return ctx.ledger.pruneEvents(ctx.db, before, limit);
}

/**
 * PostgreSQL: creates the daily event partitions missing from the retention cutoff's day through a
 * week ahead (event-partitions.ts); returns their names. `lockTimeoutMs` 0 waits for another
 * instance doing the same (at start); otherwise that instance's work is left to it, and a table
 * lock not granted within it fails the call, to be tried again at the next pass. SQLite: nothing.
 */
export async function ensureEventPartitions(
  ctx: StoreContext,
  now: number,
  retentionDays: number,
  lockTimeoutMs = 0,
): Promise<string[]> {
  return changePartitions(ctx, (partitions, tx) =>
    partitions.create(tx.db, now, retentionDays, lockTimeoutMs),
  );
}

/** PostgreSQL: the event partitions as they are now; SQLite: null (one table). */
export function eventPartitions(ctx: StoreContext): Promise<EventPartitions | null> {
  return ctx.ledger.partitions?.read(ctx.db) ?? Promise.resolve(null);
}

/**
 * PostgreSQL: detaches and drops the event partitions wholly older than `before`, whatever their
 * size (retention); returns their names, as `ensureEventPartitions` takes `lockTimeoutMs`. SQLite:
 * nothing (`pruneEvents` deletes its rows).
 */
export async function dropExpiredEventPartitions(
  ctx: StoreContext,
  before: number,
  lockTimeoutMs = 0,
): Promise<string[]> {
  return changePartitions(ctx, (partitions, tx) => partitions.drop(tx.db, before, lockTimeoutMs));
}

/** Runs `change` on the engine's event partitions in one transaction; without partitions, nothing. */
async function changePartitions(
  ctx: StoreContext,
  change: (partitions: EventPartitioning, tx: StoreContext) => Promise<string[]>,
): Promise<string[]> {
  const { partitions } = ctx.ledger;
  if (!partitions) return [];
  return transact(ctx, (tx) => change(partitions, tx));
}

/**
 * Forgets up to `limit` idempotency keys past their 24-hour window; returns how many. In a
 * transaction of its own: SQLite's ledger writes through the connection's handle, which must not
 * run inside a batch's transaction, and its delete and the mark it may leave go together.
 */
export function pruneIdempotencyKeys(ctx: StoreContext, now: number, limit: number): Promise<number> {
  return transact(ctx, (tx) => tx.ledger.pruneIdempotencyKeys(tx.db, now, limit));
}

/** A campaign with a cap or a price per event, as the batch that locked it found it. */
interface SettledCampaign {
  id: number;
  advertiserId: number;
  status: string;
  timeZone: string;
  caps: Caps;
  hasCaps: boolean;
  budgetTotal: Micros | null;
  budgetDaily: Micros | null;
  /** Its price in force where the engine's settling read gives it (`SettlingRow.newest_price`). */
  newestPrice?: PriceRow | null;
}

/**
 * The batch's campaigns that have a cap or charge per event, each row locked until the batch
 * commits (`EngineTraits.lockRows`: PostgreSQL's `FOR UPDATE`, in id order so batches never
 * deadlock; SQLite: its one writer at a time). Every batch that may move a campaign's counters or
 * charge it holds that lock first, so the counters it reads next are the ones it will add to:
 * however many batches and instances track the campaign at once, each sees the last unit under a
 * cap go to exactly one event, and each CPM run is priced from where the previous one ended.
 *
 * `ids` are `settlingCampaignIds`: on SQLite every counted event's campaign, so that a price set a
 * moment ago, which the index may not know yet, is charged all the same.
 */
async function lockSettledCampaigns(
  ctx: StoreContext,
  ids: readonly number[],
): Promise<Map<number, SettledCampaign>> {
  if (ids.length === 0) return new Map();
  const rows: readonly SettlingRow[] =
    ctx.ledger.settlingCampaigns?.(ids) ??
    (await ctx.db
      .selectFrom('campaigns')
      .select([
        'id',
        'advertiser_id',
        'status',
        'time_zone',
        'cap_impressions_total',
        'cap_clicks_total',
        'cap_impressions_daily',
        'cap_clicks_daily',
        'budget_total_micros',
        'budget_daily_micros',
      ])
      .where('id', 'in', ids)
      .where((eb) =>
        eb.or([
          eb('cap_impressions_total', 'is not', null),
          eb('cap_clicks_total', 'is not', null),
          eb('cap_impressions_daily', 'is not', null),
          eb('cap_clicks_daily', 'is not', null),
          eb('price_model', 'in', PER_EVENT_PRICE_MODELS),
        ]),
      )
      .orderBy('id')
      .$call((q) => ctx.traits.lockRows(q))
      .execute());
  return new Map(
    rows.map((row) => {
      const caps = capsOf(row);
      return [
        Number(row.id),
        {
          id: Number(row.id),
          advertiserId: Number(row.advertiser_id),
          status: row.status,
          timeZone: row.time_zone,
          caps,
          hasCaps: Object.values(caps).some((cap) => cap !== null),
          budgetTotal: row.budget_total_micros === null ? null : micros(row.budget_total_micros),
          budgetDaily: row.budget_daily_micros === null ? null : micros(row.budget_daily_micros),
          newestPrice: row.newest_price,
        },
      ];
    }),
  );
}

/**
 * The campaigns of the batch that may have a cap or charge per event: those of the events the
 * serving index marked (`mayHitCap`, `priced`); where a batch commits in a transaction anyway
 * (`commitsAlone` false: SQLite) those of every counted event (see `lockSettledCampaigns`).
 */
function settlingCampaignIds(ctx: StoreContext, events: readonly TrackedEvent[]): number[] {
  const everyCounted = !ctx.ledger.commitsAlone;
  return [
    ...new Set(
      events
        .filter((event) => event.verdict === 'counted' && (everyCounted || event.mayHitCap || event.priced))
        .map((e) => e.campaignId),
    ),
  ];
}

/** The key of a campaign's counter: its whole flight ('total') or a local date. */
const counterKey = (campaignId: number, day: string) => `${campaignId}:${day}`;

/**
 * The batch with every `counted` event that would take a locked campaign past a cap of its kind,
 * total or daily (counters as stored plus the events before it in the batch), made `invalid`,
 * `past cap`. Such events were validated against an index that had not yet learnt of the cap:
 * shown or clicked in flight, they are stored, not billed. A replay in the batch takes a unit here
 * that it then does not use (it is stored as a duplicate): the cap may then end a few units short,
 * never over.
 */
async function holdCaps(
  ctx: StoreContext,
  events: readonly TrackedEvent[],
  capped: ReadonlyMap<number, SettledCampaign>,
  effects: BatchOutcome,
): Promise<readonly TrackedEvent[]> {
  if (capped.size === 0) return events;
  const dayOf = (event: TrackedEvent, campaign: SettledCampaign) =>
    localDate(event.occurredAt, campaign.timeZone);
  const days = new Set(['total']);
  for (const event of events) {
    const campaign = capped.get(event.campaignId);
    if (campaign) days.add(dayOf(event, campaign));
  }
  const rows = await ctx.db
    .selectFrom('campaign_counters')
    .select(['campaign_id', 'day', 'impressions', 'clicks'])
    .where('campaign_id', 'in', [...capped.keys()])
    .where('day', 'in', [...days])
    .execute();
  const counters = new Map<string, Totals>(
    rows.map((row) => [
      counterKey(Number(row.campaign_id), row.day),
      { impressions: Number(row.impressions), clicks: Number(row.clicks) },
    ]),
  );
  const counter = (key: string): Totals => {
    let totals = counters.get(key);
    if (!totals) counters.set(key, (totals = { impressions: 0, clicks: 0 }));
    return totals;
  };
  return events.map((event, index) => {
    const campaign = capped.get(event.campaignId);
    if (!campaign || event.verdict !== 'counted' || !event.mayHitCap) return event;
    const total = counter(counterKey(campaign.id, 'total'));
    const today = counter(counterKey(campaign.id, dayOf(event, campaign)));
    const units = event.kind === 'impression' ? 'impressions' : 'clicks';
    const { total: totalCap, daily: dailyCap } = capsOfKind(campaign.caps, event.kind);
    if ((totalCap !== null && total[units] >= totalCap) || (dailyCap !== null && today[units] >= dailyCap)) {
      effects.pastCap.push(index);
      return settledAs(event, 'invalid', REASONS.pastCap, 0, 0);
    }
    total[units]++;
    today[units]++;
    return event;
  });
}

/** A campaign's total and daily cap of one kind of event. */
function capsOfKind(caps: Caps, kind: EventKind): { total: number | null; daily: number | null } {
  return kind === 'impression'
    ? { total: caps.impressionsTotal, daily: caps.impressionsDaily }
    : { total: caps.clicksTotal, daily: caps.clicksDaily };
}

/**
 * Adds the batch's counted events to their campaigns' counters (the whole flight and each local
 * day), then completes a running campaign whose total cap is reached and holds one whose daily cap
 * is reached until its next local midnight.
 */
async function applyCaps(
  ctx: StoreContext,
  stored: readonly TrackedEvent[],
  capped: ReadonlyMap<number, SettledCampaign>,
  effects: BatchOutcome,
): Promise<void> {
  for (const campaign of capped.values()) {
    const mine = stored.filter(
      (event) => event.campaignId === campaign.id && event.verdict === 'counted' && event.mayHitCap,
    );
    if (mine.length === 0) continue;
    const last = mine[mine.length - 1] as TrackedEvent;
    const byDay = new Map<string, Totals>();
    for (const event of mine) {
      const day = localDate(event.occurredAt, campaign.timeZone);
      const totals = byDay.get(day) ?? { impressions: 0, clicks: 0 };
      if (event.kind === 'impression') totals.impressions++;
      else totals.clicks++;
      byDay.set(day, totals);
    }
    const added = [...byDay.values()].reduce(
      (sum, day) => ({ impressions: sum.impressions + day.impressions, clicks: sum.clicks + day.clicks }),
      { impressions: 0, clicks: 0 },
    );
    const total = await bumpCounter(ctx, campaign.id, 'total', added);
    const days = new Map<string, Totals>();
    for (const [day, totals] of byDay) days.set(day, await bumpCounter(ctx, campaign.id, day, totals));
    const today = days.get(localDate(last.occurredAt, campaign.timeZone)) as Totals;
    const reached = (count: number, cap: number | null) => cap !== null && count >= cap;
    if (
      campaign.status === 'running' &&
      totalCapReached({ ...NO_CAPS, ...totalsOnly(campaign.caps) }, total)
    ) {
      await complete(ctx, campaign, last.occurredAt, REACHED.totalCap, effects);
    } else if (
      reached(today.impressions, campaign.caps.impressionsDaily) ||
      reached(today.clicks, campaign.caps.clicksDaily)
    ) {
      await holdForTheDay(ctx, campaign, last.occurredAt, effects, REACHED.dailyCap);
    }
  }
}

/** Completes a running campaign that reached a total cap or budget (`why`), audited as the system's. */
async function complete(
  ctx: StoreContext,
  campaign: SettledCampaign,
  at: number,
  why: string,
  effects: BatchOutcome,
): Promise<void> {
  await ctx.db
    .updateTable('campaigns')
    .set({ status: 'completed', updated_at: at })
    .where('id', '=', campaign.id)
    .execute();
  await appendAudit(ctx, {
    at,
    actor: 'system',
    objectType: 'campaign',
    objectId: String(campaign.id),
    action: 'complete',
    reason: why,
    before: { status: campaign.status },
    after: { status: 'completed' },
  });
  effects.completed.push(campaign.id);
}

/** Holds a campaign that reached a daily cap or budget on the local day of `at` until its end. */
async function holdForTheDay(
  ctx: StoreContext,
  campaign: SettledCampaign,
  at: number,
  effects: BatchOutcome,
  why: typeof REACHED.dailyCap | typeof REACHED.dailyBudget,
): Promise<void> {
  const until = startOfNextLocalDay(at, campaign.timeZone);
  const held = await ctx.db
    .updateTable('campaigns')
    .set({ capped_until: until })
    .where('id', '=', campaign.id)
    .where((eb) => eb.or([eb('capped_until', 'is', null), eb('capped_until', '<', until)]))
    .executeTakeFirst();
  effects.cappedForTheDay.push(campaign.id);
  // Audited once per day held (a late event of a held day holds nothing new), as the system's, in
  // this commit: its webhook (campaign.cap_reached or budget_reached) follows from the entry.
  if (Number(held.numUpdatedRows) === 1)
    await appendAudit(ctx, {
      at,
      actor: 'system',
      objectType: 'campaign',
      objectId: String(campaign.id),
      action: 'hold',
      reason: why,
      before: null,
      after: { cappedUntil: new Date(until).toISOString() },
    });
}

/** A campaign's total caps alone. */
const totalsOnly = (caps: Caps) => ({
  impressionsTotal: caps.impressionsTotal,
  clicksTotal: caps.clicksTotal,
});

/** Counted impressions and clicks of a campaign's whole flight, as its total caps see them. */
export async function campaignTotals(ctx: StoreContext, campaignId: number): Promise<Totals> {
  const row = await ctx.db
    .selectFrom('campaign_counters')
    .select(['impressions', 'clicks'])
    .where('campaign_id', '=', campaignId)
    .where('day', '=', 'total')
    .executeTakeFirst();
  return { impressions: Number(row?.impressions ?? 0), clicks: Number(row?.clicks ?? 0) };
}

async function bumpCounter(
  ctx: StoreContext,
  campaignId: number,
  day: string,
  { impressions, clicks }: Totals,
): Promise<Totals> {
  return ctx.db
    .insertInto('campaign_counters')
    .values({ campaign_id: campaignId, day, impressions, clicks })
    .onConflict((oc) =>
      oc.columns(['campaign_id', 'day']).doUpdateSet((eb) => ({
        impressions: eb('campaign_counters.impressions', '+', impressions),
        clicks: eb('campaign_counters.clicks', '+', clicks),
      })),
    )
    .returning(['impressions', 'clicks'])
    .executeTakeFirstOrThrow()
    .then((row) => ({ impressions: Number(row.impressions), clicks: Number(row.clicks) }));
}

export async function countEvents(
  ctx: StoreContext,
  filter: { kind?: EventKind; campaignId?: number } = {},
): Promise<number> {
  let query = ctx.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'));
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.campaignId !== undefined) query = query.where('campaign_id', '=', filter.campaignId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}
