// bench/reports/costs.mjs: what fast reports cost the rest of the product (migration 013).
// 1. Tracking: a batch's write and commit (50 events, as bench/events sends them, through the
//    engine's ledger) with this build, and with a copy of it without the ledger's step for late
//    quarter hours: without `event_rollups_campaign`, with it (its cost alone), and with an index
//    holding the count instead (the covering index that was not chosen). The four alternate batch
//    by batch, so the host's drift weighs on all alike. BENCH_SECONDS per engine (default 120).
// 2. Compaction: how long summing one quarter hour holds the store, the last day of the kept
//    10-million-row stores of `npm run bench:reports` redone on a copy (skipped when missing).
// Run with `node scripts/setup.mjs && node bench/reports/costs.mjs`; the process pins itself to
// core 0, as the server would be.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { patchedBuild } from '../../scripts/patched-build.mjs';
import { adminQuery, median, postgresUrl, ROOT, SERVER_CORE, tempDir } from '../lib.mjs';
import { seedCampaigns } from '../seed.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 120);
const DAY = 24 * 60 * 60_000;
const QUARTER_HOUR = 15 * 60_000;
const DIST = path.join(ROOT, 'apps/server/dist');

execFileSync('taskset', ['-a', '-p', '-c', SERVER_CORE, String(process.pid)], { stdio: 'ignore' });

/** This build without the index and the late step (the `late` CTE on PostgreSQL). */
function buildWithout() {
  const ledger = fs.readFileSync(path.join(DIST, 'store/event-ledger-postgres.js'), 'utf8');
  const start = ledger.indexOf('  ),\n  -- A quarter hour already summed');
  const end = ledger.indexOf('  )\n  select ord, outcome from settled');
  if (start < 0 || end < 0) throw new Error('the late step of the PostgreSQL ledger was not found');
  return patchedBuild('bench-without-report-rollups', [
    {
      file: 'store/event-ledger-sqlite.js',
      from: 'const compactedBefore = Number(compacted.get()?.value ?? 0);',
      to: 'const compactedBefore = 0;',
    },
    { file: 'store/event-ledger-postgres.js', from: ledger.slice(start, end + 4), to: '  )\n' },
  ]);
}

const stats = (times) => {
  const mean = times.reduce((sum, t) => sum + t, 0) / times.length;
  return { batches: times.length, meanUs: mean * 1000, medianUs: median(times) * 1000 };
};

/** The variants of the batch write: a build, and the index it has in place of the product's. */
const VARIANTS = (engine, without) => [
  ['this build', DIST, null],
  ['without', without, ''],
  ['index alone', without, 'create index event_rollups_campaign on event_rollups (campaign_id, minute)'],
  [
    'covering index',
    without,
    engine === 'sqlite'
      ? 'create index covering on event_rollups (campaign_id, minute, kind, verdict, count)'
      : 'create index covering on event_rollups (campaign_id, minute) include (kind, verdict, count)',
  ],
];

async function batchCost(engine, without, dir) {
  const variants = [];
  for (const [[name, build, index], n] of VARIANTS(engine, without).map((variant, n) => [variant, n])) {
    const url =
      engine === 'sqlite'
        ? `sqlite:${path.join(dir, `${n}.db`)}`
        : postgresUrl(`placard_bench_costs_${process.pid}_${n}`);
    if (engine === 'postgres') await adminQuery(`create database ${new URL(url).pathname.slice(1)}`);
    const { pairs } = await seedCampaigns(url, 1_000);
    const open = (await import(path.join(build, 'store/connect.js'))).connect;
    const connection = open(url);
    if (index !== null) {
      await connection.db.schema.dropIndex('event_rollups_campaign').execute();
      if (index !== '') await sql.raw(index).execute(connection.db);
    }
    const ledger =
      engine === 'sqlite'
        ? (await import(path.join(build, 'store/event-ledger-sqlite.js'))).storeBatchSqlite
        : (await import(path.join(build, 'store/event-ledger-postgres.js'))).storeBatchPostgres;
    const write =
      engine === 'sqlite'
        ? (events) => connection.sqlite.transaction(() => ledger(connection.sqlite, events))()
        : (events) => ledger(connection.db, events);
    variants.push({ name, url, connection, pairs, write, times: [] });
  }
  let counter = 0;
  const batch = (pairs) =>
    Array.from({ length: 50 }, () => {
      counter++;
      const [campaignId, placement] = pairs[Math.floor(Math.random() * pairs.length)];
      return {
        kind: counter % 21 === 0 ? 'click' : 'impression',
        campaignId,
        placement,
        country: 'US',
        device: 'mobile',
        partnerId: 1,
        apiKeyId: 1,
        occurredAt: Date.now(),
        verdict: 'counted',
        reason: null,
        idempotencyKey: `bench-${counter}`,
        userAddress: null,
        mayHitCap: false,
      };
    });
  const end = performance.now() + SECONDS * 1000;
  for (let round = 0; performance.now() < end; round++) {
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + round) % variants.length];
      const events = batch(variant.pairs);
      const started = performance.now();
      await variant.write(events);
      variant.times.push(performance.now() - started);
    }
  }
  const base = stats(variants[1].times);
  for (const variant of variants) {
    const { batches, meanUs, medianUs } = stats(variant.times);
    const more = (((meanUs - base.meanUs) / base.meanUs) * 100).toFixed(1);
    console.log(
      `${engine.padEnd(10)} batch of 50, ${variant.name.padEnd(14)} mean ${meanUs.toFixed(0)} µs, median ` +
        `${medianUs.toFixed(0)} µs (${batches} batches): ${more}% more than without`,
    );
    await variant.connection.close();
    if (engine === 'postgres')
      await adminQuery(`drop database ${new URL(variant.url).pathname.slice(1)} with (force)`);
  }
}

async function compactionStall(engine, dir) {
  // The newest seed version's store, when older ones are still kept.
  const newest = (names) =>
    names.sort((a, b) => Number(b.match(/v(\d+)/)[1]) - Number(a.match(/v(\d+)/)[1]))[0];
  const seed =
    engine === 'sqlite'
      ? newest(
          fs.readdirSync(path.join(ROOT, '.bench')).filter((name) => /^reports-store-v\d+\.db$/.test(name)),
        )
      : newest(
          (
            await adminQuery(`select datname from pg_database where datname like 'placard_bench_reports_v%'`)
          ).map((row) => row.datname),
        );
  if (seed === undefined) {
    console.log(`${engine.padEnd(10)} compaction: no kept store (run npm run bench:reports first)`);
    return;
  }
  let url;
  if (engine === 'sqlite') {
    fs.copyFileSync(path.join(ROOT, '.bench', seed), path.join(dir, 'copy.db'));
    url = `sqlite:${path.join(dir, 'copy.db')}`;
  } else {
    await adminQuery(`create database placard_bench_costs_${process.pid} template ${seed}`);
    url = postgresUrl(`placard_bench_costs_${process.pid}`);
  }
  const store = new Store(connect(url));
  try {
    const { minute } = await store.db
      .selectFrom('event_rollups')
      .select((eb) => eb.fn.max('minute').as('minute'))
      .executeTakeFirstOrThrow();
    // The end of the quarter hour of the newest rollup: the end of the seeded 90 days.
    const until = Number(minute) - (Number(minute) % QUARTER_HOUR) + QUARTER_HOUR;
    await store.db
      .deleteFrom('campaign_rollups')
      .where('slot', '>=', until - DAY)
      .execute();
    await store.db
      .updateTable('meta')
      .set({ value: String(until - DAY) })
      .where('key', '=', 'rollups_compacted_before')
      .execute();
    const times = [];
    for (;;) {
      const started = performance.now();
      if ((await store.compactRollups(until)) === null) break;
      times.push(performance.now() - started);
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `${engine.padEnd(10)} compaction of a quarter hour (${times.length}, the last day of ${seed}): ` +
        `median ${median(times).toFixed(1)} ms, longest ${sorted[sorted.length - 1].toFixed(1)} ms`,
    );
  } finally {
    await store.close();
    if (engine === 'postgres')
      await adminQuery(`drop database if exists placard_bench_costs_${process.pid} with (force)`);
  }
}

const dir = tempDir('placard-bench-costs-');
const without = buildWithout();
try {
  for (const engine of ['sqlite', 'postgres']) await batchCost(engine, without, dir);
  for (const engine of ['sqlite', 'postgres']) await compactionStall(engine, dir);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(without, { recursive: true, force: true });
}
