// bench/fetch/profile.mjs: where the fetch path's CPU time goes, per request. Runs the fetch load
// (1,000 campaigns, as bench/fetch; `-- events` for the tracking load of bench/events instead,
// with its serve tokens, and `-- events unguarded` for that load on the build without the rate
// limiter, browser check and traffic judge; `-- caps` for the fetch load naming one of 100,000
// viewers with half the campaigns frequency-capped, as `bench/fetch/run.mjs --caps`)
// against the server started with V8's CPU profiler, RUNS times,
// each in a new server process. Only the profiler samples taken while the measured load ran count,
// so start-up and warm-up are left out. Prints each run's busy CPU time per request and the share
// of Node's `process.nextTick` in it (5 to 7 µs in about half the processes until the server kept
// its queue entries' shape, apps/server/src/cli/tick-shape.ts; docs/benchmarks.md), then the
// functions with the most self time per request (medians over the runs; BENCH_EACH=1 prints each
// run's own as well). BENCH_NODE_FLAGS adds flags to the server's node (`--max-inlined-bytecode-size=0`
// keeps each function's time its own, none folded into its callers); BENCH_KEEP_PROFILE=<file> keeps
// the last run's .cpuprofile there (its `positionTicks` give the lines). The profiler slows the
// server, so these throughputs are not the benchmark's figures.
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { prepareLoad } from '../events/load.mjs';
import { BENCH_TOKEN_SECRET } from '../events/tokens.mjs';
import { capHalfTheCampaigns, seedCampaigns, writePairs } from '../seed.mjs';

const events = process.argv.includes('events');
const SCRIPT = path.join(bench.ROOT, events ? 'bench/events/events.lua' : 'bench/fetch/fetch.lua');
const TOP = Number(process.env.BENCH_TOP ?? 12);

bench.prepareMachine();

const dir = bench.tempDir('placard-bench-profile-');
// Removed however the script ends, a failed measurement included.
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const databaseUrl = `sqlite:${path.join(dir, 'placard.db')}`;
/** The wrk script's environment for one run: the events load's is new each time (fresh tokens). */
const scriptEnv = events ? (await prepareLoad('sqlite', databaseUrl, dir)).scriptEnv : await fetchLoad();
const cli = process.argv.includes('unguarded') ? bench.unguardedCli() : bench.CLI;

/** The fetch load's key and (campaign, placement) pairs. */
async function fetchLoad() {
  const { key, pairs } = await seedCampaigns(databaseUrl, 1_000);
  const pairsFile = writePairs(pairs, path.join(dir, 'pairs.lua'));
  if (!process.argv.includes('caps'))
    return () => ({ PLACARD_BENCH_KEY: key, PLACARD_BENCH_PAIRS: pairsFile });
  await capHalfTheCampaigns(databaseUrl);
  return () => ({ PLACARD_BENCH_KEY: key, PLACARD_BENCH_PAIRS: pairsFile, PLACARD_BENCH_VIEWERS: '100000' });
}

/** Self time (µs) by function over the samples taken between `from` and `to` (µs, monotonic). */
function selfTimes(profile, from, to) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const times = new Map();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at > to) return;
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    times.set(name, (times.get(name) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  return times;
}

/** One profiled measurement in a new server process. */
async function profiled() {
  const profileDir = fs.mkdtempSync(path.join(dir, 'profile-'));
  const server = await bench.startPinned(
    [
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
      cli,
      'serve',
      '--json',
    ],
    bench.serverEnv(dir, { PLACARD_TOKEN_SECRET: BENCH_TOKEN_SECRET }),
  );
  let result;
  let from;
  let to;
  try {
    bench.wrk(server.url, { seconds: 2, script: SCRIPT, scriptEnv: scriptEnv() });
    const env = scriptEnv();
    from = Number(process.hrtime.bigint() / 1000n);
    result = bench.wrk(server.url, { seconds: bench.SECONDS, script: SCRIPT, scriptEnv: env });
    to = Number(process.hrtime.bigint() / 1000n);
  } finally {
    await server.stop();
  }
  const file = fs.readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no CPU profile');
  const times = selfTimes(JSON.parse(fs.readFileSync(path.join(profileDir, file), 'utf8')), from, to);
  if (process.env.BENCH_KEEP_PROFILE)
    fs.copyFileSync(path.join(profileDir, file), process.env.BENCH_KEEP_PROFILE);
  const requests = result.rps * ((to - from) / 1e6);
  const perRequest = new Map([...times].map(([name, us]) => [name, us / requests]));
  let busy = 0;
  let tick = 0;
  for (const [name, us] of perRequest) {
    if (!name.startsWith('(idle)')) busy += us;
    if (name.startsWith('nextTick ')) tick += us;
  }
  return { rps: result.rps, busy, tick, perRequest };
}

const measured = [];
for (let run = 1; run <= bench.RUNS; run++) {
  const result = await profiled();
  measured.push(result);
  console.log(
    `run ${run}: ${result.rps.toFixed(0)} req/s under the profiler, ` +
      `${result.busy.toFixed(1)} µs busy per request, of which process.nextTick ${result.tick.toFixed(2)} µs`,
  );
  if (process.env.BENCH_EACH) {
    const top = [...result.perRequest].filter(([n]) => !n.startsWith('(idle)')).sort((a, b) => b[1] - a[1]);
    for (const [name, us] of top.slice(0, TOP)) console.log(`    ${us.toFixed(2).padStart(6)} µs  ${name}`);
  }
}

const names = new Set(measured.flatMap((m) => [...m.perRequest.keys()]));
const medians = [...names]
  .filter((name) => !name.startsWith('(idle)'))
  .map((name) => [name, bench.median(measured.map((m) => m.perRequest.get(name) ?? 0))])
  .sort((a, b) => b[1] - a[1]);
console.log(
  `\nmedian of ${bench.RUNS} runs: ${bench.median(measured.map((m) => m.rps)).toFixed(0)} req/s under the profiler, ` +
    `${bench.median(measured.map((m) => m.busy)).toFixed(1)} µs busy per request; self time per request:`,
);
for (const [name, us] of medians.slice(0, TOP)) console.log(`  ${us.toFixed(2).padStart(6)} µs  ${name}`);
