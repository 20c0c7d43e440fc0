// bench/events/instances.mjs (`npm run bench:events -- --instances`): tracking on PostgreSQL
// through HAProxy (the reference cluster's configuration, scripts/haproxy.mjs) with one instance
// and with two, against the hello-world in the same run. The instances share the server core, as
// one instance has it alone in the main benchmark; HAProxy and wrk share the load core; PostgreSQL
// is not pinned. So the two rows compare the same CPU budget: what a second process gains while
// the first waits for its commits. Each run: hello, one instance, two, two, one, hello (median of
// RUNS). The same load as `run.mjs`: impressions with fresh serve tokens, clicks 20:1.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startHaproxy } from '../../scripts/haproxy.mjs';
import { ensureHaproxy } from '../../scripts/setup.mjs';
import * as bench from '../lib.mjs';
import { freePort } from '../../scripts/event-load.mjs';
import { prepareLoad, SCRIPT, verdictsOf } from './load.mjs';
import { BENCH_TOKEN_SECRET } from './tokens.mjs';

/**
 * Tracking through HAProxy in front of `count` instances on the database of `target`, pinned
 * like `measure` pins one server; HAProxy on the load core.
 */
async function throughHaproxy(
  target,
  count,
  dir,
  script,
  serverKeepAlive = process.env.BENCH_SERVER_KEEP_ALIVE === 'true',
) {
  const env = bench.serverEnv(dir, {
    // HAProxy in front adds X-Forwarded-For (scripts/haproxy.mjs).
    PLACARD_TRUSTED_PROXIES: '127.0.0.1',
    PLACARD_DATABASE_URL: target.databaseUrl,
    PLACARD_TOKEN_SECRET: BENCH_TOKEN_SECRET,
  });
  const instances = [];
  let haproxy;
  try {
    for (let i = 0; i < count; i++)
      instances.push(await bench.startPinned([bench.CLI, 'serve', '--json'], env));
    const port = await freePort();
    haproxy = await startHaproxy({
      port,
      dir: path.join(dir, `haproxy-${count}`),
      serverKeepAlive,
      servers: instances.map((instance, i) => ({
        name: `placard${i + 1}`,
        port: new URL(instance.url).port,
      })),
    });
    execFileSync('taskset', ['-pc', bench.LOAD_CORE, String(haproxy.child.pid)], { stdio: 'ignore' });
    // Until HAProxy's first health checks pass it answers 503.
    while (Object.values(await haproxy.states()).some((state) => state !== 'UP'))
      await new Promise((resolve) => setTimeout(resolve, 100));
    const url = `http://127.0.0.1:${port}`;
    bench.wrk(url, { seconds: 2, script, scriptEnv: target.scriptEnv() });
    return bench.wrk(url, { seconds: bench.SECONDS, script, scriptEnv: target.scriptEnv() });
  } finally {
    if (haproxy) {
      haproxy.child.kill('SIGTERM');
      await haproxy.exited;
    }
    for (const instance of instances) await instance.stop();
  }
}

/** Runs the comparison on `target` (prepared by run.mjs); returns its summary. */
async function compareInstances(target, dir, script) {
  ensureHaproxy();
  const hello = () => bench.measureHello(script, target.scriptEnv);
  const runs = [];
  for (let run = 1; run <= bench.RUNS; run++) {
    const helloBefore = await hello();
    const oneA = await throughHaproxy(target, 1, dir, script);
    const twoA = await throughHaproxy(target, 2, dir, script);
    const twoB = await throughHaproxy(target, 2, dir, script);
    const oneB = await throughHaproxy(target, 1, dir, script);
    const helloAfter = await hello();
    const baseline = (helloBefore.rps + helloAfter.rps) / 2;
    const one = (oneA.rps + oneB.rps) / 2;
    const two = (twoA.rps + twoB.rps) / 2;
    runs.push({
      baseline,
      one,
      two,
      p99One: bench.median([oneA.p99, oneB.p99]),
      p99Two: bench.median([twoA.p99, twoB.p99]),
    });
    console.log(
      `run ${run}: hello ${baseline.toFixed(0)} req/s; PostgreSQL through HAProxy, 1 instance ` +
        `${one.toFixed(0)} (${bench.pct(one / baseline)}), 2 instances ${two.toFixed(0)} (${bench.pct(two / baseline)}; ` +
        `${bench.pct(two / one)} of 1)`,
    );
  }
  const summary = {
    method: `instances on core 0, HAProxy and wrk -t1 -c50 -d${bench.SECONDS}s on core 1, PostgreSQL unpinned; each run hello, 1, 2, 2, 1 instances, hello; median of ${bench.RUNS} runs`,
    helloRps: bench.median(runs.map((r) => r.baseline)),
    oneRps: bench.median(runs.map((r) => r.one)),
    oneRatio: bench.median(runs.map((r) => r.one / r.baseline)),
    twoRps: bench.median(runs.map((r) => r.two)),
    twoRatio: bench.median(runs.map((r) => r.two / r.baseline)),
    twoOverOne: bench.median(runs.map((r) => r.two / r.one)),
    runs,
  };
  const file = bench.writeResults('events-instances', summary);
  console.log(`
events on PostgreSQL through HAProxy, ${summary.method}
  hello-world baseline   ${summary.helloRps.toFixed(0)} req/s
  1 instance             ${summary.oneRps.toFixed(0)} req/s = ${bench.pct(summary.oneRatio)} of baseline
  2 instances            ${summary.twoRps.toFixed(0)} req/s = ${bench.pct(summary.twoRatio)} of baseline, ${bench.pct(summary.twoOverOne)} of 1 instance
results: ${path.relative(bench.ROOT, file)}`);
  return summary;
}

const dir = bench.tempDir('placard-bench-instances-');
const pgName = `placard_bench_instances_${process.pid}`;
await bench.adminQuery(`create database ${pgName}`);
try {
  const target = await prepareLoad('postgres', bench.postgresUrl(pgName), dir);
  await compareInstances(target, dir, SCRIPT);
  console.log(`events by verdict and reason: ${JSON.stringify(await verdictsOf(target.databaseUrl))}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await bench.adminQuery(`drop database if exists ${pgName} with (force)`);
}
