// bench/fetch: fetch throughput with 1,000 and 100,000 running campaigns, relative to a node:http
// hello-world measured in the same run. Targets (issue "Placard server"): 1k >= 50% of the baseline,
// 100k >= 70% of the 1k figure, server RSS with 100k campaigns < 300 MB.
import fs from 'node:fs';
import path from 'node:path';
import {
  checkCores,
  CLI,
  ensureWrk,
  measure,
  median,
  pct,
  ROOT,
  RUNS,
  SECONDS,
  tempDir,
  writeResults,
} from '../lib.mjs';
import { seedStore } from '../seed.mjs';

const SCRIPT = path.join(ROOT, 'bench/fetch/fetch.lua');

checkCores();
ensureWrk();

async function prepare(count) {
  const dir = tempDir(`placard-bench-${count}-`);
  const started = Date.now();
  const key = await seedStore(`sqlite:${path.join(dir, 'placard.db')}`, count);
  console.log(`bench: seeded ${count} campaigns in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { dir, key };
}

const scriptEnv = (key) => ({ PLACARD_BENCH_KEY: key });

const placardEnv = (dir) => ({ PLACARD_DATA_DIR: dir, PLACARD_PORT: '0', PLACARD_LOG_LEVEL: 'warn' });
const small = await prepare(1_000);
const large = await prepare(100_000);
const runs = [];
const mean = (a, b) => (a + b) / 2;
for (let run = 1; run <= RUNS; run++) {
  // Symmetric order, so a machine that speeds up or slows down during the run affects numerator
  // and denominator alike: hello, 1k, 100k, 1k, hello.
  const helloBefore = await measure([path.join(ROOT, 'bench/hello.mjs')], {}, SCRIPT, scriptEnv(small.key));
  const k1Before = await measure(
    [CLI, 'serve', '--json'],
    placardEnv(small.dir),
    SCRIPT,
    scriptEnv(small.key),
  );
  const k100 = await measure([CLI, 'serve', '--json'], placardEnv(large.dir), SCRIPT, scriptEnv(large.key));
  const k1After = await measure(
    [CLI, 'serve', '--json'],
    placardEnv(small.dir),
    SCRIPT,
    scriptEnv(small.key),
  );
  const helloAfter = await measure([path.join(ROOT, 'bench/hello.mjs')], {}, SCRIPT, scriptEnv(small.key));
  const hello = { rps: mean(helloBefore.rps, helloAfter.rps) };
  const k1 = { rps: mean(k1Before.rps, k1After.rps), p99: Math.max(k1Before.p99, k1After.p99) };
  runs.push({ helloBefore, k1Before, k100, k1After, helloAfter, hello, k1 });
  console.log(
    `run ${run}: hello ${helloBefore.rps.toFixed(0)}/${helloAfter.rps.toFixed(0)} req/s; ` +
      `1k ${k1Before.rps.toFixed(0)}/${k1After.rps.toFixed(0)} (${pct(k1.rps / hello.rps)}); ` +
      `100k ${k100.rps.toFixed(0)} (${pct(k100.rps / k1.rps)} of 1k), RSS ${k100.rssMb.toFixed(0)} MB`,
  );
}

const summary = {
  method: `server on core 0, wrk -t1 -c50 -d${SECONDS}s on core 1, each run hello/1k/100k/1k/hello, median of ${RUNS} runs`,
  helloRps: median(runs.map((r) => r.hello.rps)),
  fetch1kRps: median(runs.map((r) => r.k1.rps)),
  fetch1kRatio: median(runs.map((r) => r.k1.rps / r.hello.rps)),
  fetch1kP99Ms: median(runs.map((r) => r.k1.p99)),
  fetch100kRps: median(runs.map((r) => r.k100.rps)),
  fetch100kRatioTo1k: median(runs.map((r) => r.k100.rps / r.k1.rps)),
  fetch100kRatioToHello: median(runs.map((r) => r.k100.rps / r.hello.rps)),
  fetch100kP99Ms: median(runs.map((r) => r.k100.p99)),
  rss100kMb: median(runs.map((r) => r.k100.rssMb)),
  runs,
};
const file = writeResults('fetch', summary);
const verdict = (ok) => (ok ? 'met' : 'NOT MET');
console.log(`
fetch, ${summary.method}
  hello-world baseline          ${summary.helloRps.toFixed(0)} req/s
  1,000 campaigns               ${summary.fetch1kRps.toFixed(0)} req/s = ${pct(summary.fetch1kRatio)} of baseline (target >= 50%: ${verdict(summary.fetch1kRatio >= 0.5)}), p99 ${summary.fetch1kP99Ms.toFixed(2)} ms
  100,000 campaigns             ${summary.fetch100kRps.toFixed(0)} req/s = ${pct(summary.fetch100kRatioTo1k)} of the 1k figure (target >= 70%: ${verdict(summary.fetch100kRatioTo1k >= 0.7)}), p99 ${summary.fetch100kP99Ms.toFixed(2)} ms
  server RSS, 100k campaigns    ${summary.rss100kMb.toFixed(0)} MB (target < 300 MB: ${verdict(summary.rss100kMb < 300)})
results: ${path.relative(ROOT, file)}`);
for (const { dir } of [small, large]) fs.rmSync(dir, { recursive: true, force: true });
