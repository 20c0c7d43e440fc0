// bench/fetch: fetch throughput with 1,000 and 100,000 running campaigns, relative to a node:http
// hello-world measured in the same run. Targets: 1k >= 50% of the baseline, 100k >= 70% of the 1k
// figure, server RSS with 100k campaigns < 300 MB; the rate limiter and browser check cost < 5%
// (the 1k figure against a build without them, limits too high to trigger). For information, the
// 1k figure with limits in Redis.
//
// `--caps` measures fetch by 100,000 viewers with and without frequency caps instead (D20).
//
// `--compare <dist>` measures this build against another build of the server (a copy of
// apps/server/dist made from another commit) in the same run instead: 1,000 campaigns only, each
// run hello, this, other, other, this, hello, so both builds see the same state of the machine.
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { seedStore } from '../seed.mjs';

const SCRIPT = path.join(bench.ROOT, 'bench/fetch/fetch.lua');

bench.prepareMachine();

async function prepare(count) {
  const dir = bench.tempDir(`placard-bench-${count}-`);
  // Removed however the benchmark ends, a failed measurement included.
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const started = Date.now();
  const key = await seedStore(`sqlite:${path.join(dir, 'placard.db')}`, count);
  console.log(`bench: seeded ${count} campaigns in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { dir, key };
}

const scriptEnv = (key) => ({ PLACARD_BENCH_KEY: key });

const mean = (a, b) => (a + b) / 2;

const compareAt = process.argv.indexOf('--compare');
if (compareAt !== -1) {
  const other = process.argv[compareAt + 1];
  if (other === undefined) throw new Error('--compare needs the dist directory of the other build');
  await compareBuilds(path.resolve(other, 'cli/main.js'));
  process.exit(0);
}

/** This build's fetch against another build's, both as ratios to the hello-world of the same run. */
async function compareBuilds(otherCli) {
  if (!fs.existsSync(otherCli)) throw new Error(`no build at ${otherCli}`);
  const { dir, key } = await prepare(1_000);
  const fetch = (cli) => bench.measureServer(cli, bench.serverEnv(dir), SCRIPT, scriptEnv(key));
  await bench.compareInOneRun({
    name: 'fetch-compare',
    what: '1,000 campaigns',
    other: path.relative(bench.ROOT, otherCli),
    hello: () => bench.measureHello(SCRIPT, scriptEnv(key)),
    measureThis: () => fetch(bench.CLI),
    measureOther: () => fetch(otherCli),
  });
}

const capsAt = process.argv.indexOf('--caps');
if (capsAt !== -1) {
  await compareCaps();
  process.exit(0);
}

/**
 * Frequency caps' cost on fetch (D20): 1,000 campaigns without frequency caps against the same
 * campaigns with half of them capped, both fetched by 100,000 viewers (`fetch.lua` with `PLACARD_BENCH_VIEWERS`), in the
 * same run (hello, uncapped, capped, capped, uncapped, hello). Target: p99 at most 0.5 ms more with
 * caps; throughput and the RSS of the capped server (which holds the viewers) for information.
 */
async function compareCaps() {
  const plain = await prepare(1_000);
  const capped = await prepare(1_000);
  await capHalf(path.join(capped.dir, 'placard.db'));
  const viewers = (key) => ({ ...scriptEnv(key), PLACARD_BENCH_VIEWERS: '100000' });
  const fetchOf = (seeded) => () =>
    bench.measureServer(bench.CLI, bench.serverEnv(seeded.dir), SCRIPT, viewers(seeded.key));
  const runs = [];
  for (let run = 1; run <= bench.RUNS; run++) {
    const helloBefore = await bench.measureHello(SCRIPT, viewers(plain.key));
    const plainBefore = await fetchOf(plain)();
    const cappedBefore = await fetchOf(capped)();
    const cappedAfter = await fetchOf(capped)();
    const plainAfter = await fetchOf(plain)();
    const helloAfter = await bench.measureHello(SCRIPT, viewers(plain.key));
    const hello = mean(helloBefore.rps, helloAfter.rps);
    const figures = (before, after) => ({
      ratio: mean(before.rps, after.rps) / hello,
      p99: mean(before.p99, after.p99),
      rssMb: Math.max(before.rssMb, after.rssMb),
    });
    const r = { hello, plain: figures(plainBefore, plainAfter), capped: figures(cappedBefore, cappedAfter) };
    runs.push(r);
    console.log(
      `run ${run}: hello ${hello.toFixed(0)} req/s; without caps ${bench.pct(r.plain.ratio)}, p99 ${r.plain.p99.toFixed(2)} ms; ` +
        `half capped ${bench.pct(r.capped.ratio)}, p99 ${r.capped.p99.toFixed(2)} ms, RSS ${r.capped.rssMb.toFixed(0)} MB`,
    );
  }
  const summary = {
    method: `server on core 0, wrk -t1 -c50 -d${bench.SECONDS}s on core 1, 1,000 campaigns, 100,000 viewers, each run hello/uncapped/capped/capped/uncapped/hello, median of ${bench.RUNS} runs`,
    helloRps: bench.median(runs.map((r) => r.hello)),
    plainRatio: bench.median(runs.map((r) => r.plain.ratio)),
    cappedRatio: bench.median(runs.map((r) => r.capped.ratio)),
    plainP99Ms: bench.median(runs.map((r) => r.plain.p99)),
    cappedP99Ms: bench.median(runs.map((r) => r.capped.p99)),
    p99GrowthMs: bench.median(runs.map((r) => r.capped.p99 - r.plain.p99)),
    cappedRssMb: bench.median(runs.map((r) => r.capped.rssMb)),
    runs,
  };
  const file = bench.writeResults('fetch-caps', summary);
  console.log(`
fetch with frequency caps, ${summary.method}
  hello-world baseline          ${summary.helloRps.toFixed(0)} req/s
  without frequency caps        ${bench.pct(summary.plainRatio)} of baseline, p99 ${summary.plainP99Ms.toFixed(2)} ms
  half the campaigns capped     ${bench.pct(summary.cappedRatio)} of baseline, p99 ${summary.cappedP99Ms.toFixed(2)} ms, RSS ${summary.cappedRssMb.toFixed(0)} MB
  p99 growth                    ${summary.p99GrowthMs.toFixed(2)} ms (target <= 0.5 ms: ${bench.metOrNot(summary.p99GrowthMs <= 0.5)})
results: ${path.relative(bench.ROOT, file)}`);
}

/** Gives every other campaign of a seeded store frequency caps of 2 a day and 5 a week. */
async function capHalf(file) {
  const { connect } = await import('../../apps/server/dist/store/connect.js');
  const { Store } = await import('../../apps/server/dist/store/store.js');
  const store = new Store(connect(`sqlite:${file}`));
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

const UNGUARDED = bench.unguardedCli();
const REDIS_URL = process.env.PLACARD_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const small = await prepare(1_000);
const large = await prepare(100_000);
const runs = [];
for (let run = 1; run <= bench.RUNS; run++) {
  // Symmetric order, so a machine that speeds up or slows down during the run affects numerator
  // and denominator alike: hello, 1k, 1k unguarded, 100k, 1k with Redis, 1k unguarded, 1k, hello.
  const hello = () => bench.measureHello(SCRIPT, scriptEnv(small.key));
  const oneK = (cli = bench.CLI, env = {}) =>
    bench.measureServer(cli, bench.serverEnv(small.dir, env), SCRIPT, scriptEnv(small.key));
  const helloBefore = await hello();
  const k1Before = await oneK();
  const bareBefore = await oneK(UNGUARDED);
  const k100 = await bench.measureServer(bench.CLI, bench.serverEnv(large.dir), SCRIPT, scriptEnv(large.key));
  const shared = await oneK(bench.CLI, { PLACARD_REDIS_URL: REDIS_URL });
  const bareAfter = await oneK(UNGUARDED);
  const k1After = await oneK();
  const helloAfter = await hello();
  const baseline = { rps: mean(helloBefore.rps, helloAfter.rps) };
  const k1 = { rps: mean(k1Before.rps, k1After.rps), p99: Math.max(k1Before.p99, k1After.p99) };
  const bare = { rps: mean(bareBefore.rps, bareAfter.rps) };
  runs.push({
    helloBefore,
    k1Before,
    bareBefore,
    k100,
    shared,
    bareAfter,
    k1After,
    helloAfter,
    hello: baseline,
    k1,
    bare,
  });
  console.log(
    `run ${run}: hello ${helloBefore.rps.toFixed(0)}/${helloAfter.rps.toFixed(0)} req/s; ` +
      `1k ${k1Before.rps.toFixed(0)}/${k1After.rps.toFixed(0)} (${bench.pct(k1.rps / baseline.rps)}); ` +
      `1k without limiter and browser check ${bareBefore.rps.toFixed(0)}/${bareAfter.rps.toFixed(0)} (guards cost ${bench.pct(1 - k1.rps / bare.rps)}); ` +
      `1k with Redis ${shared.rps.toFixed(0)} (${bench.pct(shared.rps / k1.rps)} of 1k); ` +
      `100k ${k100.rps.toFixed(0)} (${bench.pct(k100.rps / k1.rps)} of 1k), RSS ${k100.rssMb.toFixed(0)} MB`,
  );
}

const summary = {
  method: `server on core 0, wrk -t1 -c50 -d${bench.SECONDS}s on core 1, each run hello/1k/1k unguarded/100k/1k Redis/1k unguarded/1k/hello, median of ${bench.RUNS} runs`,
  helloRps: bench.median(runs.map((r) => r.hello.rps)),
  fetch1kRps: bench.median(runs.map((r) => r.k1.rps)),
  fetch1kRatio: bench.median(runs.map((r) => r.k1.rps / r.hello.rps)),
  fetch1kP99Ms: bench.median(runs.map((r) => r.k1.p99)),
  fetch100kRps: bench.median(runs.map((r) => r.k100.rps)),
  fetch100kRatioTo1k: bench.median(runs.map((r) => r.k100.rps / r.k1.rps)),
  fetch100kRatioToHello: bench.median(runs.map((r) => r.k100.rps / r.hello.rps)),
  fetch100kP99Ms: bench.median(runs.map((r) => r.k100.p99)),
  rss100kMb: bench.median(runs.map((r) => r.k100.rssMb)),
  guardsCost: bench.median(runs.map((r) => 1 - r.k1.rps / r.bare.rps)),
  redisRatioTo1k: bench.median(runs.map((r) => r.shared.rps / r.k1.rps)),
  runs,
};
const file = bench.writeResults('fetch', summary);
console.log(`
fetch, ${summary.method}
  hello-world baseline          ${summary.helloRps.toFixed(0)} req/s
  1,000 campaigns               ${summary.fetch1kRps.toFixed(0)} req/s = ${bench.pct(summary.fetch1kRatio)} of baseline (target >= 50%: ${bench.metOrNot(summary.fetch1kRatio >= 0.5)}), p99 ${summary.fetch1kP99Ms.toFixed(2)} ms
  100,000 campaigns             ${summary.fetch100kRps.toFixed(0)} req/s = ${bench.pct(summary.fetch100kRatioTo1k)} of the 1k figure (target >= 70%: ${bench.metOrNot(summary.fetch100kRatioTo1k >= 0.7)}), p99 ${summary.fetch100kP99Ms.toFixed(2)} ms
  server RSS, 100k campaigns    ${summary.rss100kMb.toFixed(0)} MB (target < 300 MB: ${bench.metOrNot(summary.rss100kMb < 300)})
  limiter + browser check       cost ${bench.pct(summary.guardsCost)} of the 1k throughput (target < 5%: ${bench.metOrNot(summary.guardsCost < 0.05)})
  limits shared in Redis        ${bench.pct(summary.redisRatioTo1k)} of the 1k figure (for information)
results: ${path.relative(bench.ROOT, file)}`);
