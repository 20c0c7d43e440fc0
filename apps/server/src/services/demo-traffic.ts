import type { Campaign } from '../domain/campaigns.js';
import { chargesPerEvent } from '../domain/prices.js';
import { mulberry32 } from '../domain/seeded-random.js';
import { BILLABLE_VERDICT } from '../domain/verdicts.js';
import type { Store, TrackedEvent } from '../store/store.js';

/** How far back the demo's traffic goes, and how busy an average campaign is in an average hour. */
const DAYS = 7;
const IMPRESSIONS_PER_HOUR = 3;
/** About one display in seventy is clicked. */
const CLICK_RATE = 0.015;
/** Events stored per batch: one transaction each, through the same ledger as the partner API. */
const BATCH = 2_000;
const HOUR = 3_600_000;
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'CA'];
const DEVICES = ['mobile', 'desktop', 'tablet'] as const;

/** Busier in the day than at night (UTC), the way most sites are: 0.2 at 04:00 to 1.8 at 16:00. */
const dailyCurve = (ms: number) => 1 - 0.8 * Math.cos(((new Date(ms).getUTCHours() - 4) / 24) * 2 * Math.PI);

/**
 * A week of traffic from the demo partner to the running demo campaigns, stored like partners'
 * events (raw events and their per-minute rollups, in the same transactions), so a new user's
 * reports and charts have something to show. Every event is `counted` and has no Idempotency-Key.
 */
/** When the demo's week of traffic, seeded at `now`, begins: the start of the hour a week before. */
export function demoTrafficStart(now: number): number {
  return Math.floor(now / HOUR) * HOUR - DAYS * 24 * HOUR;
}

export async function seedDemoTraffic(
  store: Store,
  campaigns: readonly Campaign[],
  source: { partnerId: number; apiKeyId: number },
  now: number,
): Promise<number> {
  // Seeded, so every demo store gets the same week.
  const next = mulberry32(20261125);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const running = campaigns.filter((campaign) => campaign.status === 'running');
  const start = demoTrafficStart(now);
  // PostgreSQL: the week's days have their event partitions, whatever the retention period.
  await store.ensureEventPartitions(now, DAYS);
  let batch: TrackedEvent[] = [];
  let stored = 0;
  const flush = async () => {
    stored += batch.length;
    await store.insertEvents(batch);
    batch = [];
  };
  for (let hour = start; hour < now; hour += HOUR) {
    for (const campaign of running) {
      const impressions = Math.round(
        IMPRESSIONS_PER_HOUR * dailyCurve(hour) * (0.5 + next()) * campaign.weight,
      );
      for (let i = 0; i < impressions; i++) {
        const occurredAt = Math.min(now - 1, hour + Math.floor(next() * HOUR));
        const event: TrackedEvent = {
          kind: 'impression',
          campaignId: campaign.id,
          placement: pick(campaign.placements),
          country: pick(campaign.countries.length > 0 ? campaign.countries : COUNTRIES),
          device: pick(campaign.devices.length > 0 ? campaign.devices : DEVICES),
          partnerId: source.partnerId,
          apiKeyId: source.apiKeyId,
          occurredAt,
          verdict: BILLABLE_VERDICT,
          reason: null,
          idempotencyKey: null,
          userAddress: null,
          mayHitCap: false,
          priced: chargesPerEvent(campaign.price, 'impression'),
        };
        batch.push(event);
        if (next() < CLICK_RATE)
          batch.push({
            ...event,
            kind: 'click',
            occurredAt: Math.min(now - 1, occurredAt + 5_000),
            priced: chargesPerEvent(campaign.price, 'click'),
          });
        if (batch.length >= BATCH) await flush();
      }
    }
  }
  await flush();
  return stored;
}
