// bench/viewers (`npm run simulate:viewers`): frequency caps (D20) over a simulated week of honest
// traffic. `--viewers` people (default 100,000) each visit a partner's pages a few times over seven
// days (1 to 9 page views, most of them few, at random times, some in bursts of two tabs opened at
// once); each page view fetches one campaign for its placement with the partner's `viewer` and
// reports its impression with the same `viewer`, as the example site does. Half the campaigns have
// frequency caps (per hour, per day, per week, and two at once). The partner does everything right,
// so what the caps refuse to bill is the cost they put on an honest partner: the share of
// impressions stored `past frequency cap` must stay at most 0.1%. Run two ways: one instance on
// SQLite counting viewers in memory, and three instances sharing one PostgreSQL database and
// Redis, each page view going to one of them in turn (`--setup one|three`, default both). Also
// measures the memory a viewer takes in an instance's memory. Exits 1 when a bound is passed.
// `apps/server/test/viewer-simulation.e2e.test.ts` runs it at a small size in `npm test`.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import { createClient } from 'redis';
import { sql } from 'kysely';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { wireServices } from '../../apps/server/dist/wiring.js';
import { CampaignService } from '../../apps/server/dist/services/campaigns.js';
import { PartnerService } from '../../apps/server/dist/services/partners.js';
import { HIGHEST_LIMITS } from '../../apps/server/dist/domain/rate-limits.js';
import { RedisRateLimiter } from '../../apps/server/dist/limits/redis-limiter.js';
import {
  MemoryViewerFrequency,
  RedisViewerFrequency,
} from '../../apps/server/dist/limits/viewer-frequency.js';
import { ViewerKeys } from '../../apps/server/dist/domain/viewer-keys.js';
import { adminQuery, postgresUrl, tempDir, writeResults } from '../lib.mjs';
import { mulberry32 } from '../seed.mjs';

const { values: options } = parseArgs({
  options: { viewers: { type: 'string', default: '100000' }, setup: { type: 'string' } },
});
const VIEWERS = Number(options.viewers);
if (!Number.isSafeInteger(VIEWERS) || VIEWERS < 100)
  throw new Error('--viewers must be a whole number from 100');
const SETUPS = options.setup === undefined ? ['one', 'three'] : [options.setup];
const REDIS_URL = process.env.PLACARD_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WEEK = 7 * 24 * 60 * 60 * 1000;
const START = Date.parse('2026-11-02T00:00:00Z');
/** How many page views are in flight at once: a busy site's concurrent requests. */
const CONCURRENCY = 64;
/** The most impressions past a cap an honest partner may see (the bound). */
const BOUND = 0.001;

/** Half the campaigns capped, in each way a cap can be set; the others free. */
const CAPS = [
  [{ impressions: 1, per: 'hour' }],
  [{ impressions: 2, per: 'day' }],
  [{ impressions: 3, per: 'week' }],
  [
    { impressions: 1, per: 'hour' },
    { impressions: 3, per: 'day' },
  ],
  [{ impressions: 1, per: 'day' }],
  null,
  null,
  null,
  null,
  null,
];

/** Every page view of the week, in time order: who, when. */
function pageViews(random) {
  const views = [];
  for (let viewer = 0; viewer < VIEWERS; viewer++) {
    // Most people come once or twice, a few often (1 to 9 views).
    const count = 1 + Math.floor(9 * random() ** 3);
    for (let i = 0; i < count; i++) {
      const at = START + Math.floor(random() * WEEK);
      views.push({ viewer, at });
      // One view in twenty opens a second tab within a second.
      if (random() < 0.05) views.push({ viewer, at: at + Math.floor(random() * 1000) });
    }
  }
  return views.sort((a, b) => a.at - b.at);
}

async function seed(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    await store.migrate();
    const campaigns = CAPS.map((caps, i) => ({
      title: `Campaign ${i + 1}`,
      destinationUrl: `https://advertiser.example/${i + 1}`,
      status: 'running',
      placements: ['header_banner'],
      ...(caps !== null && { frequencyCaps: caps }),
    }));
    const { campaignIds } = await new CampaignService(store).import(
      { advertisers: [{ name: 'Viewer simulation', campaigns }] },
      { approve: true },
    );
    const partners = new PartnerService(store);
    const partner = await partners.createPartner('Honest partner');
    const { key } = await partners.createKey(partner.id, 'simulation');
    await partners.setKeyLimits(key.id, HIGHEST_LIMITS);
    return { campaignIds, partnerId: partner.id, apiKeyId: key.id };
  } finally {
    await store.close();
  }
}

/** An instance as the server wires one, on the simulation's clock, without its HTTP front. */
async function startInstance(databaseUrl, clock, secret, redis) {
  const store = new Store(connect(databaseUrl));
  const limiter = redis
    ? await RedisRateLimiter.connect(REDIS_URL, pino({ level: 'silent' }), undefined, redis)
    : null;
  const viewerFrequency = limiter ? new RedisViewerFrequency(limiter) : new MemoryViewerFrequency();
  const services = wireServices(store, pino({ level: 'silent' }), {
    refreshIntervalMs: 60_000,
    accessLog: false,
    eventRetentionDays: 90,
    clock,
    monotonic: clock,
    serveTokenSecret: secret,
    viewerFrequency,
  });
  await services.state.load();
  return {
    services,
    viewerFrequency,
    async stop() {
      await services.events.close();
      await limiter?.close();
      await store.close();
    },
  };
}

async function simulate(setup, databaseUrl) {
  const random = mulberry32(20);
  const { campaignIds, partnerId, apiKeyId } = await seed(databaseUrl);
  const clock = { now: START };
  const secret = Buffer.alloc(32, 7);
  const prefix = `placard-sim-${process.pid}-${setup}:`;
  const instances = [];
  for (let i = 0; i < (setup === 'three' ? 3 : 1); i++)
    instances.push(
      await startInstance(databaseUrl, () => clock.now, secret, setup === 'three' ? prefix : null),
    );
  const caller = { partnerId, apiKeyId, blockedCategories: [], blockedAdvertisers: [], policies: {} };
  const views = pageViews(random);
  const started = performance.now();
  let served = 0;
  let empty = 0;
  /** Each viewer's impressions of each capped campaign, as sent: `viewer:campaign` → times. */
  const shown = new Map();
  const capsOf = new Map(campaignIds.map((id, i) => [id, CAPS[i]]));
  try {
    for (let next = 0; next < views.length; next += CONCURRENCY) {
      const chunk = views.slice(next, next + CONCURRENCY);
      clock.now = chunk[0].at;
      await Promise.all(
        chunk.map(async ({ viewer }, i) => {
          const { delivery } = instances[(next + i) % instances.length].services;
          const id = `reader-${viewer}`;
          const body = await delivery.fetch({ placement: 'header_banner', limit: 1, viewer: id }, caller);
          const [campaign] = JSON.parse(body.toString('utf8')).data;
          if (campaign === undefined) {
            empty++;
            return;
          }
          served++;
          if (capsOf.get(campaign.id) !== null) {
            const key = `${viewer}:${campaign.id}`;
            shown.set(key, [...(shown.get(key) ?? []), clock.now]);
          }
          await delivery.track(
            'impression',
            { campaignId: campaign.id, placement: 'header_banner', viewer: id },
            caller,
          );
        }),
      );
    }
  } finally {
    for (const instance of instances) await instance.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const store = new Store(connect(databaseUrl));
  let counts;
  try {
    const rows = await store.db
      .selectFrom('events')
      .select(['verdict', 'reason', sql`count(*)`.as('count')])
      .groupBy(['verdict', 'reason'])
      .execute();
    counts = Object.fromEntries(rows.map((row) => [`${row.verdict}:${row.reason ?? ''}`, Number(row.count)]));
  } finally {
    await store.close();
  }
  const overCap = shownPastCap(shown, capsOf);
  const impressions = Object.values(counts).reduce((sum, count) => sum + count, 0);
  const past = counts['invalid:past frequency cap'] ?? 0;
  if (setup === 'three') await redisCleanup(prefix);
  return {
    setup,
    overCap,
    viewers: VIEWERS,
    pageViews: views.length,
    served,
    empty,
    impressions,
    past,
    share: past / impressions,
    counts,
    seconds,
    campaigns: campaignIds.length,
  };
}

/**
 * How many impressions were shown past a cap, by the simulation's own record: each impression that,
 * with the viewer's earlier ones of the campaign in the cap's window, makes more than the cap.
 * Fetch leaves a campaign out once its viewer reached a cap, so there are none unless an instance
 * had to count in its own memory (Redis answering too slowly) and did not know the others' counts.
 */
function shownPastCap(shown, capsOf) {
  const PERIOD = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 };
  let past = 0;
  for (const [key, times] of shown) {
    const caps = capsOf.get(Number(key.split(':')[1]));
    times.forEach((at, i) => {
      const over = caps.some(
        ({ impressions, per }) =>
          times.filter((other, j) => j <= i && other > at - PERIOD[per]).length > impressions,
      );
      if (over) past++;
    });
  }
  return past;
}

/** Deletes the simulation's keys from the shared Redis (they would expire within a week anyway). */
async function redisCleanup(prefix) {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    let batch = [];
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      batch.push(...(Array.isArray(keys) ? keys : [keys]));
      if (batch.length >= 1000) {
        await client.unlink(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await client.unlink(batch);
  } finally {
    await client.quit();
  }
}

/**
 * Bytes per viewer remembered in memory: `count` viewers each shown one capped campaign (and every
 * tenth a second), the heap measured after a full collection before and after, with the viewers'
 * blocks of entries, which live outside the heap (`MemoryViewerFrequency.blockBytes`).
 */
function memoryPerViewer(count) {
  // A full collection on demand without a command-line flag: the flag set, a new context has `gc`.
  v8.setFlagsFromString('--expose-gc');
  const collect = vm.runInNewContext('gc');
  collect();
  const before = process.memoryUsage().heapUsed;
  const memory = new MemoryViewerFrequency(count + 1);
  const keys = new ViewerKeys(Buffer.alloc(32, 1));
  const caps = [{ impressions: 3, per: 'day' }];
  for (let i = 0; i < count; i++) {
    const viewer = keys.of(1, `reader-${i}`);
    memory.reserve(viewer, 1, caps, START + i);
    if (i % 10 === 0) memory.reserve(viewer, 2, caps, START + i);
  }
  collect();
  return (process.memoryUsage().heapUsed - before + memory.blockBytes) / memory.size;
}

const dir = tempDir('placard-bench-viewers-');
const pgName = `placard_bench_viewers_${process.pid}`;
const results = [];
try {
  for (const setup of SETUPS) {
    if (setup === 'three') {
      await adminQuery(`create database ${pgName}`);
      results.push(await simulate(setup, postgresUrl(pgName)));
    } else results.push(await simulate(setup, `sqlite:${path.join(dir, 'placard.db')}`));
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  if (SETUPS.includes('three')) await adminQuery(`drop database if exists ${pgName} with (force)`);
}
const perViewer = memoryPerViewer(Math.min(VIEWERS, 100_000));
writeResults('viewers', { results, bytesPerViewer: perViewer });
let failed = false;
for (const r of results) {
  const within = r.share <= BOUND && r.overCap / r.impressions <= BOUND;
  failed ||= !within;
  console.log(
    `viewers ${r.setup === 'one' ? 'one instance (SQLite, memory)' : 'three instances (PostgreSQL, Redis)'}: ` +
      `${r.viewers.toLocaleString('en')} viewers, ${r.pageViews.toLocaleString('en')} page views in a simulated week, ` +
      `${r.impressions.toLocaleString('en')} impressions stored, ${r.past.toLocaleString('en')} past frequency cap ` +
      `(${(r.share * 100).toFixed(3)}%, bound 0.1%: ${r.share <= BOUND ? 'met' : 'NOT MET'}); ` +
      `${r.overCap.toLocaleString('en')} shown past a cap (${((r.overCap / r.impressions) * 100).toFixed(3)}%, bound 0.1%: ${r.overCap / r.impressions <= BOUND ? 'met' : 'NOT MET'}); ${r.empty.toLocaleString('en')} fetches empty; ${r.seconds.toFixed(0)} s`,
  );
}
console.log(
  `viewers memory: ${perViewer.toFixed(0)} bytes per viewer remembered, heap and blocks (one capped campaign, a tenth two)`,
);
if (failed) process.exit(1);
