// What pacing reads (D16): the running campaigns that pace evenly, their cap counters, and the
// recent traffic of placements. Part of the Store façade (store.ts): functions over a StoreContext.
import type { Campaign } from '../domain/campaigns.js';
import { micros, type Micros } from '../domain/money.js';
import { getCampaigns } from './campaigns.js';
import type { StoreContext } from './context.js';

const QUARTER_HOUR = 15 * 60_000;

/** Running campaigns with `pacing` `even` (migration 015's index finds them among every campaign). */
export async function runningEvenCampaigns(ctx: StoreContext): Promise<Campaign[]> {
  const rows = await ctx.db
    .selectFrom('campaigns')
    .select('id')
    .where('pacing', '=', 'even')
    .where('status', '=', 'running')
    .execute();
  return getCampaigns(
    ctx,
    rows.map((row) => Number(row.id)),
  );
}

/** What a campaign's cap and budget counters hold for one period: counted events and their spend. */
export interface CapCounter {
  impressions: number;
  clicks: number;
  spendMicros: Micros;
}

/**
 * Counted impressions and clicks and their spend, by `campaignId:day` (`day` a local date, or
 * 'total'), for these keys.
 */
export async function capCounters(
  ctx: StoreContext,
  keys: ReadonlyArray<{ campaignId: number; day: string }>,
): Promise<Map<string, CapCounter>> {
  const found = new Map<string, CapCounter>();
  if (keys.length === 0) return found;
  const rows = await ctx.db
    .selectFrom('campaign_counters')
    .select(['campaign_id', 'day', 'impressions', 'clicks', 'spend_micros'])
    .where('campaign_id', 'in', [...new Set(keys.map((key) => key.campaignId))])
    .where('day', 'in', [...new Set(keys.map((key) => key.day))])
    .execute();
  for (const row of rows) {
    found.set(`${Number(row.campaign_id)}:${row.day}`, {
      impressions: Number(row.impressions),
      clicks: Number(row.clicks),
      spendMicros: micros(row.spend_micros),
    });
  }
  return found;
}

/**
 * Impressions of every campaign in these placements from `since` to `until`, summed by quarter
 * hour (or by `slotMs`, a multiple of a minute; keyed by its start, epoch ms): what pacing learns
 * the shape of their traffic from, and (by minute) how busy they are now.
 */
export async function placementTraffic(
  ctx: StoreContext,
  placements: readonly string[],
  since: number,
  until: number,
  slotMs = QUARTER_HOUR,
): Promise<Array<{ slot: number; impressions: number }>> {
  if (placements.length === 0) return [];
  const rows = await ctx.db
    .selectFrom('event_rollups_live')
    .select((eb) => [
      eb('minute', '-', eb('minute', '%', slotMs)).as('slot'),
      eb.fn.sum<number | string>('count').as('impressions'),
    ])
    .where('minute', '>=', since)
    .where('minute', '<', until)
    .where('placement_id', 'in', [...placements])
    .where('kind', '=', 'impression')
    .groupBy('slot')
    .execute();
  return rows.map((row) => ({ slot: Number(row.slot), impressions: Number(row.impressions) }));
}

/**
 * What each of these campaigns spent from `since` to `until`, summed from the per-minute rollups:
 * the recent pace a budget's forecast goes on at. Campaigns with no spend are left out.
 */
export async function campaignSpendBetween(
  ctx: StoreContext,
  campaignIds: readonly number[],
  since: number,
  until: number,
): Promise<Map<number, Micros>> {
  const found = new Map<number, Micros>();
  if (campaignIds.length === 0) return found;
  const rows = await ctx.db
    .selectFrom('event_rollups_live')
    .select((eb) => ['campaign_id', eb.fn.sum<number | string>('spend_micros').as('spend')])
    .where('campaign_id', 'in', [...new Set(campaignIds)])
    .where('minute', '>=', since)
    .where('minute', '<', until)
    .groupBy('campaign_id')
    .execute();
  for (const row of rows) found.set(Number(row.campaign_id), micros(row.spend));
  return found;
}
