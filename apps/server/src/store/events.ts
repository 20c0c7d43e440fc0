// Tracked events: a batch stored through the engine's ledger with its caps applied, retention, counts.
// Part of the Store façade (store.ts): functions over a StoreContext.
import { NO_CAPS, totalCapReached, type Totals } from '../domain/campaigns.js';
import { localDate, startOfNextLocalDay } from '../domain/time-zones.js';
import {
  pruneEvents as pruneOldEvents,
  pruneIdempotencyKeys as pruneOldIdempotencyKeys,
  type SettledBatch,
} from './event-ledger.js';
import type { EventKind, TrackedEvent, BatchOutcome } from './rows.js';
import { transact, type StoreContext } from './context.js';
import { appendAudit } from './audit.js';

/**
 * Stores a batch of events atomically: idempotent replays become duplicates, events whose key was
 * used for a different request are refused and left out (`BatchOutcome.refused`), the raw events and
 * their per-minute rollups are written together, and caps are applied to what counts (counters of
 * capped campaigns advance, a total cap completes the campaign, a daily cap holds it until the
 * next local midnight of its time zone). Resolves only once durable.
 */
export async function insertEvents(
  ctx: StoreContext,
  events: readonly TrackedEvent[],
): Promise<BatchOutcome> {
  const effects: BatchOutcome = {
    refused: [],
    replayed: [],
    completed: [],
    cappedForTheDay: [],
    stored: new Map(),
  };
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
      if (stored[next++]?.verdict === 'duplicate') effects.replayed.push(index);
    }
  };
  // A batch with nothing to cap is one statement where the engine's ledger commits it by itself.
  if (ctx.ledger.commitsAlone && !ctx.db.isTransaction && !events.some((event) => event.mayHitCap)) {
    count(await ctx.ledger.store(ctx.db, events));
    return effects;
  }
  await transact(ctx, async (tx) => {
    const settled = await tx.ledger.store(tx.db, events);
    count(settled);
    await applyCaps(tx, settled.stored, effects);
  });
  return effects;
}

/** Deletes up to `limit` raw events older than `before` (retention); returns how many. */
export function pruneEvents(ctx: StoreContext, before: number, limit: number): Promise<number> {
  return pruneOldEvents(ctx.db, before, limit);
}

/** Forgets up to `limit` idempotency keys past their 24-hour window; returns how many. */
export function pruneIdempotencyKeys(ctx: StoreContext, now: number, limit: number): Promise<number> {
  return pruneOldIdempotencyKeys(ctx.db, now, limit);
}

async function applyCaps(
  ctx: StoreContext,
  events: readonly TrackedEvent[],
  effects: BatchOutcome,
): Promise<void> {
  const counted = events.filter((event) => event.verdict === 'counted' && event.mayHitCap);
  const ids = [...new Set(counted.map((event) => event.campaignId))];
  if (ids.length === 0) return;
  const capped = await ctx.db
    .selectFrom('campaigns')
    .select([
      'id',
      'status',
      'time_zone',
      'cap_impressions_total',
      'cap_clicks_total',
      'cap_impressions_daily',
      'cap_clicks_daily',
    ])
    .where('id', 'in', ids)
    .orderBy('id') // one lock order for concurrent batches
    .where((eb) =>
      eb.or([
        eb('cap_impressions_total', 'is not', null),
        eb('cap_clicks_total', 'is not', null),
        eb('cap_impressions_daily', 'is not', null),
        eb('cap_clicks_daily', 'is not', null),
      ]),
    )
    .execute();
  for (const campaign of capped) {
    const mine = counted.filter((event) => event.campaignId === campaign.id);
    const last = mine[mine.length - 1] as TrackedEvent;
    const day = localDate(last.occurredAt, campaign.time_zone);
    const impressions = mine.filter((event) => event.kind === 'impression').length;
    const clicks = mine.length - impressions;
    const [total, today] = await Promise.all(
      ['total', day].map((key) => bumpCounter(ctx, campaign.id, key, impressions, clicks)),
    );
    const reached = (count: number, cap: number | null) => cap !== null && count >= cap;
    const totalCaps = {
      ...NO_CAPS,
      impressionsTotal: campaign.cap_impressions_total,
      clicksTotal: campaign.cap_clicks_total,
    };
    if (campaign.status === 'running' && totalCapReached(totalCaps, total!)) {
      await ctx.db
        .updateTable('campaigns')
        .set({ status: 'completed', updated_at: last.occurredAt })
        .where('id', '=', campaign.id)
        .execute();
      await appendAudit(ctx, {
        at: last.occurredAt,
        actor: 'system',
        objectType: 'campaign',
        objectId: String(campaign.id),
        action: 'complete',
        reason: 'total cap reached',
        before: { status: campaign.status },
        after: { status: 'completed' },
      });
      effects.completed.push(campaign.id);
    } else if (
      reached(today!.impressions, campaign.cap_impressions_daily) ||
      reached(today!.clicks, campaign.cap_clicks_daily)
    ) {
      const until = startOfNextLocalDay(last.occurredAt, campaign.time_zone);
      await ctx.db
        .updateTable('campaigns')
        .set({ capped_until: until })
        .where('id', '=', campaign.id)
        .execute();
      effects.cappedForTheDay.push(campaign.id);
    }
  }
}

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
  impressions: number,
  clicks: number,
) {
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
    .executeTakeFirstOrThrow();
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
