// bench/events: impressions and clicks (20:1) with durable group commit, relative to a node:http
// hello-world in the same run. Targets: SQLite >= 33% of the baseline with p99 under 20 ms;
// PostgreSQL >= 15%; the rate limiter, browser check and traffic judge cost < 5% on SQLite
// (against a build without them, limits too high to trigger). That cost is also given as the
// server CPU time per request the guards add, which the machine's unsteadiness moves far less.
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { moneyOf, prepareLoad, SCRIPT, verdictsOf } from './load.mjs';
import { BENCH_TOKEN_SECRET } from './tokens.mjs';

bench.prepareMachine();
/** `npm run bench:events -- <mode>`: another measurement of the write path instead of this one. */
const MODES = {
  // PostgreSQL through HAProxy at 1 and 2 instances.
  '--instances': './instances.mjs',
  // `--compare <checkout>`: this build against another checkout's, SQLite.
  '--compare': './compare.mjs',
  // This build with money on against money off, SQLite.
  '--money': './money.mjs',
  // Instructions per stored batch, money on and off (valgrind).
  '--instructions': './instructions.mjs',
  // Where a SQLite server's time goes under this load.
  '--commits': './commits.mjs',
};
const mode = Object.keys(MODES).find((flag) => process.argv.includes(flag));
if (mode !== undefined) {
  await import(MODES[mode]);
  process.exit(0);
}

const dir = bench.tempDir('placard-bench-events-');
const pgName = `placard_bench_${process.pid}`;
await bench.adminQuery(`create database ${pgName}`);
try {
  const sqlite = await prepareLoad('sqlite', `sqlite:${path.join(dir, 'placard.db')}`, dir);
  const postgres = await prepareLoad('postgres', bench.postgresUrl(pgName), dir);
  const unguarded = bench.unguardedCli();
  const serve = (target, cli = bench.CLI) =>
    bench.measureServer(
      cli,
      bench.serverEnv(dir, {
        PLACARD_DATABASE_URL: target.databaseUrl,
        PLACARD_TOKEN_SECRET: BENCH_TOKEN_SECRET,
      }),
      SCRIPT,
      target.scriptEnv,
    );
  const hello = () => bench.measureHello(SCRIPT, sqlite.scriptEnv);

  const runs = [];
  for (let run = 1; run <= bench.RUNS; run++) {
    // Bracketed by hello. SQLite with and without the guards alternate A-B-B-A-A-B, so drift in
    // the machine's speed over the run weighs on both alike; the SQLite runs come before
    // PostgreSQL's, whose background writes would slow whatever follows it.
    const helloBefore = await hello();
    const bare1 = await serve(sqlite, unguarded);
    const guarded1 = await serve(sqlite);
    const guarded2 = await serve(sqlite);
    const bare2 = await serve(sqlite, unguarded);
    const bare3 = await serve(sqlite, unguarded);
    const guarded3 = await serve(sqlite);
    const onPostgres = await serve(postgres);
    const helloAfter = await hello();
    const baseline = (helloBefore.rps + helloAfter.rps) / 2;
    const guardedRuns = [guarded1, guarded2, guarded3];
    const bareRuns = [bare1, bare2, bare3];
    const sum = (measures) => measures.reduce((total, measure) => total + measure.rps, 0);
    // The SQLite figure of the run: its guarded measurements (the product as shipped).
    const onSqlite = {
      rps: sum(guardedRuns) / 3,
      p99: bench.median(guardedRuns.map((measure) => measure.p99)),
    };
    const bare = sum(bareRuns) / 3;
    const cpu = (measures) => measures.reduce((total, measure) => total + measure.cpuUsPerRequest, 0) / 3;
    const cpuUs = { guarded: cpu(guardedRuns), bare: cpu(bareRuns) };
    runs.push({
      helloBefore,
      guardedRuns,
      bareRuns,
      onPostgres,
      helloAfter,
      baseline,
      onSqlite,
      bare,
      cpuUs,
    });
    console.log(
      `run ${run}: hello ${helloBefore.rps.toFixed(0)}/${helloAfter.rps.toFixed(0)} req/s; ` +
        `SQLite ${onSqlite.rps.toFixed(0)} (${bench.pct(onSqlite.rps / baseline)}, p99 ${onSqlite.p99.toFixed(1)} ms); ` +
        `PostgreSQL ${onPostgres.rps.toFixed(0)} (${bench.pct(onPostgres.rps / baseline)}, p99 ${onPostgres.p99.toFixed(1)} ms); ` +
        `SQLite without limiter, browser check and traffic judge ${bare.toFixed(0)} (guards cost ${bench.pct(1 - onSqlite.rps / bare)}); ` +
        `server CPU per request ${cpuUs.guarded.toFixed(1)} µs with the guards, ${cpuUs.bare.toFixed(1)} µs without (${bench.pct(cpuUs.guarded / cpuUs.bare - 1)} more)`,
    );
  }
  // What the judge made of the load: nearly all billable, or the tokens were not what the server
  // expects (and the benchmark would measure refusals).
  const verdicts = {};
  for (const [label, target] of [
    ['sqlite', sqlite],
    ['postgres', postgres],
  ]) {
    verdicts[label] = await verdictsOf(target.databaseUrl);
    console.log(
      `${label} events by verdict and reason: ${JSON.stringify(verdicts[label])}; money: ${JSON.stringify(await moneyOf(target.databaseUrl))}`,
    );
  }
  const summary = {
    method: `server on core 0, wrk -t1 -c50 -d${bench.SECONDS}s on core 1, impressions with fresh serve tokens, clicks with an earlier impression's, each run hello, SQLite with and without the guards alternating 3 times each, PostgreSQL, hello, median of ${bench.RUNS} runs`,
    helloRps: bench.median(runs.map((r) => r.baseline)),
    sqliteRps: bench.median(runs.map((r) => r.onSqlite.rps)),
    sqliteRatio: bench.median(runs.map((r) => r.onSqlite.rps / r.baseline)),
    sqliteP99Ms: bench.median(runs.map((r) => r.onSqlite.p99)),
    postgresRps: bench.median(runs.map((r) => r.onPostgres.rps)),
    postgresRatio: bench.median(runs.map((r) => r.onPostgres.rps / r.baseline)),
    postgresP99Ms: bench.median(runs.map((r) => r.onPostgres.p99)),
    guardsCost: bench.median(runs.map((r) => 1 - r.onSqlite.rps / r.bare)),
    guardsCpuCost: bench.median(runs.map((r) => r.cpuUs.guarded / r.cpuUs.bare - 1)),
    verdicts,
    runs,
  };
  const file = bench.writeResults('events', summary);
  console.log(`
events (impressions:clicks 20:1), ${summary.method}
  hello-world baseline   ${summary.helloRps.toFixed(0)} req/s
  SQLite                 ${summary.sqliteRps.toFixed(0)} req/s = ${bench.pct(summary.sqliteRatio)} of baseline (target >= 33%: ${bench.metOrNot(summary.sqliteRatio >= 0.33)}), p99 ${summary.sqliteP99Ms.toFixed(1)} ms (target < 20 ms: ${bench.metOrNot(summary.sqliteP99Ms < 20)})
  PostgreSQL             ${summary.postgresRps.toFixed(0)} req/s = ${bench.pct(summary.postgresRatio)} of baseline (target >= 15%: ${bench.metOrNot(summary.postgresRatio >= 0.15)}), p99 ${summary.postgresP99Ms.toFixed(1)} ms
  limiter + browser check + traffic judge cost ${bench.pct(summary.guardsCost)} of the SQLite throughput (target < 5%: ${bench.metOrNot(summary.guardsCost < 0.05)}),
    and add ${bench.pct(summary.guardsCpuCost)} to the server's CPU time per request
results: ${path.relative(bench.ROOT, file)}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await bench.adminQuery(`drop database if exists ${pgName} with (force)`);
}
