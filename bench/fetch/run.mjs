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
import { capHalfTheCampaigns, seedStore } from '../seed.mjs';

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

/** Each connection's pause between requests for the steady load: 50 connections, at most 10,000/s. */
const STEADY_PAUSE_MS = 5;

/**
 * The caps measurement's warm-up at full load, long enough for nearly every one of the 100,000
 * viewers to have fetched (about 450,000 fetches: each viewer seen with a chance of 99%), so that
 * what is measured is a server that knows its viewers rather than one meeting most of them for the
 * first time (the first sight of a viewer, and the map of viewers growing, is another cost: see
 * docs/benchmarks.md for both).
 */
const CAPS_WARM_SECONDS = Number(process.env.BENCH_CAPS_WARM_SECONDS ?? 15);

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
 * campaigns with half of them capped, both fetched by 100,000 viewers (`fetch.lua` with
 * `PLACARD_BENCH_VIEWERS`), in the same run (hello, uncapped, capped, capped, uncapped, hello), at
 * full load and then at a steady load of at most 10,000 requests/s (`PLACARD_BENCH_PAUSE_MS`).
 * Target: p99 at most 0.5 ms more with caps. At full load a p99 is mostly the queue of 50
 * connections in front of a busy core, so it grows with any CPU a request adds; at the steady load
 * it is the time a request takes. Both are reported, with CPU per request and the capped server's
 * RSS (it holds the viewers).
 */
async function compareCaps() {
  const plain = await prepare(1_000);
  const capped = await prepare(1_000);
  await capHalfTheCampaigns(`sqlite:${path.join(capped.dir, 'placard.db')}`);
  const viewers = (key, more = {}) => ({ ...scriptEnv(key), PLACARD_BENCH_VIEWERS: '100000', ...more });
  const steady = { PLACARD_BENCH_PAUSE_MS: String(STEADY_PAUSE_MS) };
  const fetchOf = (seeded, more) => () =>
    bench.measureServer(bench.CLI, bench.serverEnv(seeded.dir), SCRIPT, viewers(seeded.key, more), {
      seconds: CAPS_WARM_SECONDS,
      scriptEnv: viewers(seeded.key),
    });
  /** Uncapped, capped, capped, uncapped: each figure the mean of its two. */
  const pair = async (more) => {
    const plainBefore = await fetchOf(plain, more)();
    const cappedBefore = await fetchOf(capped, more)();
    const cappedAfter = await fetchOf(capped, more)();
    const plainAfter = await fetchOf(plain, more)();
    const figures = (before, after) => ({
      rps: mean(before.rps, after.rps),
      p99: mean(before.p99, after.p99),
      cpuUs: mean(before.cpuUsPerRequest, after.cpuUsPerRequest),
      rssMb: Math.max(before.rssMb, after.rssMb),
    });
    return { plain: figures(plainBefore, plainAfter), capped: figures(cappedBefore, cappedAfter) };
  };
  const runs = [];
  for (let run = 1; run <= bench.RUNS; run++) {
    const helloBefore = await bench.measureHello(SCRIPT, viewers(plain.key));
    const full = await pair({});
    const helloAfter = await bench.measureHello(SCRIPT, viewers(plain.key));
    const atSteady = await pair(steady);
    const hello = mean(helloBefore.rps, helloAfter.rps);
    const r = {
      hello,
      plain: { ...full.plain, ratio: full.plain.rps / hello },
      capped: { ...full.capped, ratio: full.capped.rps / hello },
      steady: atSteady,
    };
    runs.push(r);
    console.log(
      `run ${run}: hello ${hello.toFixed(0)} req/s; full load: without caps ${bench.pct(r.plain.ratio)}, p99 ${r.plain.p99.toFixed(2)} ms, ` +
        `${r.plain.cpuUs.toFixed(1)} µs CPU; half capped ${bench.pct(r.capped.ratio)}, p99 ${r.capped.p99.toFixed(2)} ms, ` +
        `${r.capped.cpuUs.toFixed(1)} µs CPU, RSS ${r.capped.rssMb.toFixed(0)} MB; steady ${r.steady.plain.rps.toFixed(0)} req/s: ` +
        `p99 ${r.steady.plain.p99.toFixed(2)} ms without caps, ${r.steady.capped.p99.toFixed(2)} ms half capped`,
    );
  }
  const med = (pick) => bench.median(runs.map(pick));
  const summary = {
    method: `server on core 0, wrk -t1 -c50 on core 1 for ${bench.SECONDS}s after ${CAPS_WARM_SECONDS}s at full load, 1,000 campaigns, 100,000 viewers; each run hello, uncapped, capped, capped, uncapped, hello at full load, then uncapped, capped, capped, uncapped at a steady load (each connection pausing ${STEADY_PAUSE_MS} ms between requests); median of ${bench.RUNS} runs`,
    helloRps: med((r) => r.hello),
    plainRatio: med((r) => r.plain.ratio),
    cappedRatio: med((r) => r.capped.ratio),
    plainP99Ms: med((r) => r.plain.p99),
    cappedP99Ms: med((r) => r.capped.p99),
    p99GrowthMs: med((r) => r.capped.p99 - r.plain.p99),
    plainCpuUs: med((r) => r.plain.cpuUs),
    cappedCpuUs: med((r) => r.capped.cpuUs),
    cappedRssMb: med((r) => r.capped.rssMb),
    steadyRps: med((r) => r.steady.plain.rps),
    steadyPlainP99Ms: med((r) => r.steady.plain.p99),
    steadyCappedP99Ms: med((r) => r.steady.capped.p99),
    steadyP99GrowthMs: med((r) => r.steady.capped.p99 - r.steady.plain.p99),
    runs,
  };
  const file = bench.writeResults('fetch-caps', summary);
  console.log(`
fetch with frequency caps, ${summary.method}
  hello-world baseline          ${summary.helloRps.toFixed(0)} req/s
  full load, without caps       ${bench.pct(summary.plainRatio)} of baseline, p99 ${summary.plainP99Ms.toFixed(2)} ms, ${summary.plainCpuUs.toFixed(1)} µs CPU per request
  full load, half capped        ${bench.pct(summary.cappedRatio)} of baseline, p99 ${summary.cappedP99Ms.toFixed(2)} ms, ${summary.cappedCpuUs.toFixed(1)} µs CPU per request, RSS ${summary.cappedRssMb.toFixed(0)} MB
  full load, p99 growth         ${summary.p99GrowthMs.toFixed(2)} ms (target <= 0.5 ms: ${bench.metOrNot(summary.p99GrowthMs <= 0.5)})
  steady ${summary.steadyRps.toFixed(0)} req/s, p99      ${summary.steadyPlainP99Ms.toFixed(2)} ms without caps, ${summary.steadyCappedP99Ms.toFixed(2)} ms half capped
  steady load, p99 growth       ${summary.steadyP99GrowthMs.toFixed(2)} ms (target <= 0.5 ms: ${bench.metOrNot(summary.steadyP99GrowthMs <= 0.5)})
results: ${path.relative(bench.ROOT, file)}`);
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
