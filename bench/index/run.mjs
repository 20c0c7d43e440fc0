// bench/index: what a change to one campaign costs the serving process at 100,000 campaigns.
// Targets: applying one campaign change and one cap crossing to the index takes at most 5 ms of CPU
// (median of 100 each), and fetch throughput while one change a second is applied is at least 90%
// of the quiet figure, in the same run.
//
// Part 1 is in-process: the index module (the built `CampaignIndex`) loaded with the benchmark's
// 100,000 campaigns on the server core, each change timed with process.cpuUsage() (user + system)
// around `apply`; the same run times a whole build from the same campaigns in memory, which is a
// lower bound of what every change cost before (the server also read every row from the store).
// Part 2 is the real server, pinned to core 0, loaded by wrk on core 1 with the fetch benchmark's
// script: the hello-world, the quiet server, the server while `changer.mjs` makes one campaign change
// a second (applied in place), the server while it makes one change a second the log cannot name
// (a whole rebuild per change: the behaviour before), the quiet server again and the hello-world
// again; ratios use the means of the pairs; the result is the median of BENCH_RUNS runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CampaignIndex } from '../../apps/server/dist/serving/campaign-index.js';
import { NO_CAPS } from '../../apps/server/dist/domain/campaigns.js';
import { DEFAULT_PLACEMENTS } from '../../apps/server/dist/domain/placements.js';
import * as bench from '../lib.mjs';
import { startChanger } from './changer-process.mjs';
import { benchCampaigns, mulberry32, seedStore } from '../seed.mjs';

const COUNT = 100_000;
const SAMPLES = 100;
const SCRIPT = path.join(bench.ROOT, 'bench/fetch/fetch.lua');

bench.prepareMachine();

// Part 1: the index module in this process, on the server core.
execFileSync('taskset', ['-a', '-p', '-c', bench.SERVER_CORE, String(process.pid)], { stdio: 'ignore' });
const now = Date.now();
const campaigns = benchCampaigns(COUNT).map((input, i) => ({
  ...input,
  id: i + 1,
  advertiserId: 1,
  description: input.description ?? null,
  startAt: null,
  endAt: null,
  timeZone: 'UTC',
  schedule: null,
  frequencyCaps: [],
  caps: { ...NO_CAPS, impressionsDaily: 1000 },
  cappedUntil: null,
  rejectionReason: null,
  createdAt: now,
  updatedAt: now,
}));
const enabled = new Set(DEFAULT_PLACEMENTS.map((p) => p.id));

/** CPU milliseconds (user + system) that `body` takes. */
function cpuMs(body) {
  const before = process.cpuUsage();
  body();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const builds = [];
let index;
for (let i = 0; i < 3; i++) builds.push(cpuMs(() => (index = CampaignIndex.from(enabled, campaigns, now))));
const random = mulberry32(7);
const pick = () => campaigns[Math.floor(random() * COUNT)];
/** Median CPU ms of applying `changed(campaign)` to SAMPLES random campaigns (each then restored). */
function applyCost(changed) {
  const samples = [];
  for (let i = 0; i < SAMPLES + 20; i++) {
    const campaign = pick();
    const next = changed(campaign);
    const ms = cpuMs(() => index.apply(campaign.id, next, now));
    index.apply(campaign.id, campaign, now);
    if (i >= 20) samples.push(ms); // the first 20 warm the code up
  }
  return { median: bench.median(samples), max: Math.max(...samples) };
}
const inProcess = {
  fullBuildMs: bench.median(builds),
  change: applyCost((c) => ({ ...c, status: 'paused' })),
  capCrossing: applyCost((c) => ({ ...c, cappedUntil: now + 3_600_000 })),
  targeting: applyCost((c) => ({
    ...c,
    countries: ['US', 'FR'],
    devices: ['mobile'],
    priority: c.priority + 1,
  })),
};
index = undefined;
console.log(
  `in process, ${COUNT} campaigns: whole build ${inProcess.fullBuildMs.toFixed(0)} ms CPU; ` +
    `one change ${inProcess.change.median.toFixed(3)} ms, one cap crossing ${inProcess.capCrossing.median.toFixed(3)} ms, ` +
    `one targeting edit ${inProcess.targeting.median.toFixed(3)} ms (medians of ${SAMPLES})`,
);

// Part 2: the server under fetch load, quiet and with one change a second.
const dir = bench.tempDir('placard-bench-index-');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const databaseUrl = `sqlite:${path.join(dir, 'placard.db')}`;
const started = Date.now();
const key = await seedStore(databaseUrl, COUNT);
console.log(`bench: seeded ${COUNT} campaigns in ${((Date.now() - started) / 1000).toFixed(1)} s`);
const scriptEnv = { PLACARD_BENCH_KEY: key };
const placardEnv = bench.serverEnv(dir);
const changedIds = Array.from({ length: 20 }, (_, i) => 1 + i * 4999);

/** wrk in a child, so this process stays free to start and stop the changer. */
async function measure(args, env, mode) {
  const server = await bench.startPinned(args, env);
  try {
    bench.wrk(server.url, { seconds: 2, script: SCRIPT, scriptEnv });
    const stop = mode ? await startChanger(databaseUrl, mode, changedIds) : undefined;
    let result;
    try {
      result = bench.wrk(server.url, { seconds: bench.SECONDS, script: SCRIPT, scriptEnv });
    } catch (error) {
      // A whole rebuild can hold the server past wrk's 2 s timeout: that is the figure, not a fault.
      const timeouts = Number(/timeout (\d+)/.exec(error.message)?.[1] ?? 0);
      if (mode !== 'rebuild' || timeouts === 0) throw error;
      result = { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(error.message)?.[1]), p99: NaN, timeouts };
    } finally {
      if (stop) result = { ...result, changes: await stop() };
    }
    return { timeouts: 0, ...result };
  } finally {
    await server.stop();
  }
}

const mean = (a, b) => (a + b) / 2;
const runs = [];
for (let run = 1; run <= bench.RUNS; run++) {
  const hello = () => measure([bench.HELLO], {});
  const placard = (mode) => measure([bench.CLI, 'serve', '--json'], placardEnv, mode);
  const helloBefore = await hello();
  const quietBefore = await placard();
  const inPlace = await placard('in-place');
  const rebuild = await placard('rebuild');
  const quietAfter = await placard();
  const helloAfter = await hello();
  const baseline = mean(helloBefore.rps, helloAfter.rps);
  const quiet = mean(quietBefore.rps, quietAfter.rps);
  runs.push({ helloBefore, quietBefore, inPlace, rebuild, quietAfter, helloAfter, hello: baseline, quiet });
  console.log(
    `run ${run}: hello ${helloBefore.rps.toFixed(0)}/${helloAfter.rps.toFixed(0)} req/s; quiet 100k ` +
      `${quietBefore.rps.toFixed(0)}/${quietAfter.rps.toFixed(0)} (${bench.pct(quiet / baseline)}); ` +
      `changes in place ${inPlace.rps.toFixed(0)} (${bench.pct(inPlace.rps / quiet)} of quiet, ${inPlace.changes} changes); ` +
      `whole rebuild per change ${rebuild.rps.toFixed(0)} (${bench.pct(rebuild.rps / quiet)} of quiet, ${rebuild.changes} changes, ${rebuild.timeouts} requests over 2 s)`,
  );
}

// The changer's timer runs in a process that was not measured: `changes` is what it made in the window.
const summary = {
  method: `in process: ${COUNT} campaigns on core 0, CPU per apply, median of ${SAMPLES}; server on core 0, wrk -t1 -c50 -d${bench.SECONDS}s on core 1, each run hello/quiet/in-place/rebuild/quiet/hello, median of ${bench.RUNS} runs`,
  inProcess,
  helloRps: bench.median(runs.map((r) => r.hello)),
  quietRps: bench.median(runs.map((r) => r.quiet)),
  quietRatio: bench.median(runs.map((r) => r.quiet / r.hello)),
  inPlaceRatio: bench.median(runs.map((r) => r.inPlace.rps / r.quiet)),
  rebuildRatio: bench.median(runs.map((r) => r.rebuild.rps / r.quiet)),
  inPlaceP99Ms: bench.median(runs.map((r) => r.inPlace.p99)),
  rebuildP99Ms: bench.median(runs.map((r) => r.rebuild.p99)),
  quietP99Ms: bench.median(runs.map((r) => Math.max(r.quietBefore.p99, r.quietAfter.p99))),
  runs,
};
const file = bench.writeResults('index', summary);
console.log(`
index, ${summary.method}
  whole build, in process            ${inProcess.fullBuildMs.toFixed(0)} ms CPU (what every change cost before, at least)
  one campaign change                ${inProcess.change.median.toFixed(3)} ms CPU (target <= 5 ms: ${bench.metOrNot(inProcess.change.median <= 5)})
  one cap crossing                   ${inProcess.capCrossing.median.toFixed(3)} ms CPU (target <= 5 ms: ${bench.metOrNot(inProcess.capCrossing.median <= 5)})
  one targeting edit                 ${inProcess.targeting.median.toFixed(3)} ms CPU (for information)
  fetch, quiet, 100k                 ${summary.quietRps.toFixed(0)} req/s = ${bench.pct(summary.quietRatio)} of the hello-world, p99 ${summary.quietP99Ms.toFixed(2)} ms
  fetch, 1 change/s in place         ${bench.pct(summary.inPlaceRatio)} of quiet (target >= 90%: ${bench.metOrNot(summary.inPlaceRatio >= 0.9)}), p99 ${summary.inPlaceP99Ms.toFixed(2)} ms
  fetch, 1 whole rebuild/s (before)  ${bench.pct(summary.rebuildRatio)} of quiet, p99 ${summary.rebuildP99Ms.toFixed(2)} ms
results: ${path.relative(bench.ROOT, file)}`);
