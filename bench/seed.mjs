// Seeds a benchmark store: N running campaigns over the 15 placements with mixed targeting, and one
// partner key. Deterministic (seeded generator), so every run measures the same data.
import fs from 'node:fs';
import { CampaignService } from '../apps/server/dist/services/campaigns.js';
import { PartnerService } from '../apps/server/dist/services/partners.js';
import { DEFAULT_PLACEMENTS } from '../apps/server/dist/domain/placements.js';
import { HIGHEST_LIMITS } from '../apps/server/dist/domain/rate-limits.js';
import { mulberry32 } from '../apps/server/dist/domain/seeded-random.js';
import { connect } from '../apps/server/dist/store/connect.js';
import { Store } from '../apps/server/dist/store/store.js';

/** Countries the load generator asks for; campaigns target these and others. */
export const LOCATIONS = [
  'US',
  'GB',
  'DE',
  'FR',
  'CA',
  'IE',
  'AT',
  'CH',
  'JP',
  'BR',
  'IN',
  'AU',
  'ES',
  'IT',
  'NL',
  'SE',
  'PL',
  'MX',
  'KR',
  'ZA',
];
const OTHER = ['NO', 'DK', 'FI', 'PT', 'BE', 'NZ', 'SG', 'AR', 'CL', 'TR'];
export const DEVICES = ['mobile', 'desktop', 'tablet'];

/** The server's seeded generator: the same seed gives the same data on every run. */
export { mulberry32 };

function pickSome(random, pool, min, max) {
  const count = min + Math.floor(random() * (max - min + 1));
  const chosen = new Set();
  while (chosen.size < count) chosen.add(pool[Math.floor(random() * pool.length)]);
  return [...chosen];
}

export function benchCampaigns(count, seed = 42) {
  const random = mulberry32(seed);
  const placements = DEFAULT_PLACEMENTS.map((p) => p.id);
  return Array.from({ length: count }, (_, i) => ({
    title: `Benchmark campaign ${i + 1}`,
    description: `A campaign generated for the benchmark, number ${i + 1}.`,
    category: ['technology', 'business', 'sports', 'travel', 'retail'][i % 5],
    destinationUrl: `https://advertiser-${i % 97}.example/landing?c=${i + 1}`,
    status: 'running',
    priority: Math.floor(random() * 5),
    weight: 1 + Math.floor(random() * 10),
    placements: pickSome(random, placements, 1, 3),
    // 40% everywhere; the rest one to four countries.
    countries: random() < 0.4 ? [] : pickSome(random, [...LOCATIONS, ...OTHER], 1, 4),
    // 50% every device; the rest one or two.
    devices: random() < 0.5 ? [] : pickSome(random, DEVICES, 1, 2),
  }));
}

/**
 * Creates the store at `databaseUrl` with `count` campaigns. Returns a partner API key, and the
 * (campaign id, placement) pairs that tracking requests may report. `money`: whether the campaigns
 * are priced (`priceCampaigns`); by default unless `BENCH_MONEY=false`.
 */
export async function seedCampaigns(
  databaseUrl,
  count,
  { money = process.env.BENCH_MONEY !== 'false' } = {},
) {
  const store = new Store(connect(databaseUrl));
  try {
    await store.migrate();
    const campaigns = new CampaignService(store);
    const all = benchCampaigns(count);
    const pairs = [];
    for (let start = 0; start < all.length; start += 10_000) {
      const chunk = all.slice(start, start + 10_000);
      const summary = await campaigns.import(
        { advertisers: [{ name: `Bench advertiser ${start}`, campaigns: chunk }] },
        { approve: true },
      );
      summary.campaignIds.forEach((id, i) => pairs.push([id, chunk[i].placements[0]]));
    }
    const partners = new PartnerService(store);
    const partner = await partners.createPartner('Benchmark partner');
    if (money) await priceCampaigns(store, pairs, partner.id);
    const { plaintext, key } = await partners.createKey(partner.id, 'bench');
    // Limits far above what one core can serve: the benchmark measures the limiter's cost, never
    // its refusals (wrk counts any non-2xx as a failure).
    await partners.setKeyLimits(key.id, HIGHEST_LIMITS);
    return { key: plaintext, keyId: key.id, pairs };
  } finally {
    await store.close();
  }
}

/**
 * Money on (D18; `BENCH_MONEY=false` leaves it off): seven campaigns in ten priced per thousand
 * impressions (1 to 5 units), two per click (0.20 to 0.80 units), one a house campaign, and the
 * partner earning 70% from the start, so every billable event of the load is charged and earns in
 * its commit. Written through the store's own functions, as a price change and a share write them.
 */
async function priceCampaigns(store, pairs, partnerId) {
  const random = mulberry32(7);
  for (const [id] of pairs) {
    const kind = id % 10;
    if (kind === 9) continue;
    const [model, amount] =
      kind < 7
        ? ['cpm', 1_000_000 + Math.floor(random() * 4_000) * 1_000]
        : ['cpc', 200_000 + Math.floor(random() * 600) * 1_000];
    await store.updateCampaign(id, { price: { model, amountMicros: amount } }, Date.now(), 'benchmark');
  }
  await store.addRevenueShare({ partnerId, effectiveFrom: 0, basisPoints: 7_000, actor: 'benchmark' }, 0);
}

/**
 * Writes seeded (campaign, placement) pairs as a Lua table for the tracking load
 * (`bench/events/events.lua` reads it from PLACARD_BENCH_PAIRS); returns the file's path.
 */
export function writePairs(pairs, file) {
  fs.writeFileSync(file, `return {${pairs.map(([id, placement]) => `{${id},"${placement}"}`).join(',')}}\n`);
  return file;
}

/** Creates the store at `databaseUrl` with `count` campaigns; returns a partner API key. */
export async function seedStore(databaseUrl, count) {
  return (await seedCampaigns(databaseUrl, count)).key;
}

/** Gives every other campaign of a seeded store frequency caps of 2 a day and 5 a week. */
export async function capHalfTheCampaigns(databaseUrl) {
  const { connect } = await import('../apps/server/dist/store/connect.js');
  const { Store } = await import('../apps/server/dist/store/store.js');
  const store = new Store(connect(databaseUrl));
  try {
    const campaigns = await store.db.selectFrom('campaigns').select('id').execute();
    const caps = JSON.stringify([
      { impressions: 2, per: 'day' },
      { impressions: 5, per: 'week' },
    ]);
    const ids = campaigns.filter((_, i) => i % 2 === 0).map((c) => c.id);
    await store.db.updateTable('campaigns').set({ frequency_caps: caps }).where('id', 'in', ids).execute();
  } finally {
    await store.close();
  }
}
