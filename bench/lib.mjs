// Shared benchmark machinery. Method (see docs/benchmarks.md): the server under test is pinned to
// core 0 and the load generator (wrk) to core 1; a node:http hello-world is measured in the same run
// and every figure is reported as a ratio to it, the median of several runs.
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { patchedBuild } from '../scripts/patched-build.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'apps/server/dist/cli/main.js');
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';

/** wrk comes from Debian's packages; install it when missing (the benchmark does its own set-up). */
function ensureWrk() {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.log('bench: installing wrk (apt-get)…');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  for (const args of [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', 'wrk'],
  ]) {
    const [command, ...rest] = [...sudo, ...args];
    const result = spawnSync(command, rest, { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`"${args.join(' ')}" failed; install wrk and retry`);
  }
}

/** Pins this process, every thread of it, to the load core: for benchmarks that are their own client. */
export function pinToLoadCore() {
  execFileSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
}

export function checkCores() {
  if (os.cpus().length < 2)
    throw new Error('the benchmark method needs 2 cores: one for the server, one for wrk');
}

/** The machine the method needs for a benchmark that loads a server with wrk: 2 cores and wrk. */
export function prepareMachine() {
  checkSettings();
  checkCores();
  ensureWrk();
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux as built). */
let ticksPerSecond;

/** CPU time process `pid` has used, user and system, every thread, in seconds (from /proc). */
function processCpuSeconds(pid) {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command name, which may hold spaces, in parentheses: utime and stime are the 14th and
  // 15th fields of the line, so the 12th and 13th after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * Starts a process pinned to the server core that prints a JSON line with `url` once listening.
 * Resolves with { url, pid, stop, rssKb }. With `onLine`, its standard error is read too, and every
 * line of both is handed to it (a benchmark reading V8's trace as the load runs).
 */
export async function startPinned(args, env = {}, { onLine } = {}) {
  const child = spawn('taskset', ['-c', SERVER_CORE, process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', onLine ? 'pipe' : 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (onLine) readline.createInterface({ input: child.stderr }).on('line', onLine);
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start`)), 120_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      onLine?.(line);
      try {
        const parsed = JSON.parse(line);
        if (parsed.url) {
          clearTimeout(timer);
          resolve(parsed.url);
        }
      } catch {
        // not JSON
      }
    });
    exited.then((code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid,
    /** Resident set size of the server process in kB (taskset execs node, so the pid is node's). */
    rssKb() {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    },
    /** CPU time the server process has used so far, user and system, all threads, in seconds. */
    cpuSeconds() {
      return processCpuSeconds(child.pid);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Runs wrk pinned to the load core with keep-alive connections and returns requests/s and latency.
 * Fails when any response was not 2xx, so a benchmark never reports the speed of errors.
 */
export function wrk(url, options = {}) {
  const output = execFileSync('taskset', wrkArgs(url, options), { encoding: 'utf8', env: wrkEnv(options) });
  return wrkFigures(output);
}

/**
 * `wrk` without blocking this process meanwhile, for a benchmark that reads what the server prints
 * while the load runs.
 */
export async function wrkInBackground(url, options = {}) {
  const { stdout } = await promisify(execFile)('taskset', wrkArgs(url, options), {
    encoding: 'utf8',
    env: wrkEnv(options),
  });
  return wrkFigures(stdout);
}

function wrkArgs(url, { connections = 50, seconds = 10, script } = {}) {
  const args = ['-c', LOAD_CORE, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (script) args.push('-s', script);
  args.push(url);
  return args;
}

const wrkEnv = ({ scriptEnv = {} }) => ({ ...process.env, ...scriptEnv });

/** wrk's figures from its output; throws when any response was not 2xx. */
function wrkFigures(output) {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(output)?.[1];
  const latency = (label) => {
    const match = new RegExp(`\\s${label}\\s+([\\d.]+)(us|ms|s)`).exec(output);
    if (!match) return NaN;
    const scale = { us: 0.001, ms: 1, s: 1000 }[match[2]];
    return Number(match[1]) * scale;
  };
  if (non2xx > 0 || errors)
    throw new Error(`wrk saw failures (${non2xx} non-2xx; ${errors ?? 'no socket errors'}):\n${output}`);
  return { rps, requests, p50: latency('50%'), p99: latency('99%') };
}

/** The PostgreSQL server the benchmarks create their databases on (trust auth, as in the tests). */
export const POSTGRES_ADMIN_URL =
  process.env.PLACARD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the PostgreSQL server's maintenance database; returns its rows. */
export async function adminQuery(text, values = []) {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on that server. */
export function postgresUrl(name) {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/**
 * The medians over `runs` of the figures `fields` names: `['p99']` gives `p99` the median of the
 * runs' `p99`, `{ p99Ms: 'p99' }` gives it to `p99Ms`.
 */
export function mediansOf(runs, fields) {
  const names = Array.isArray(fields) ? fields.map((field) => [field, field]) : Object.entries(fields);
  return Object.fromEntries(names.map(([name, field]) => [name, median(runs.map((run) => run[field]))]));
}

/** How a summary reads a target. */
export const metOrNot = (ok) => (ok ? 'met' : 'NOT MET');

export const tempDir = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

export function writeResults(name, results) {
  const dir = path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

export const pct = (ratio) => `${(ratio * 100).toFixed(1)}%`;

/** Run count and seconds per measurement, from BENCH_RUNS and BENCH_SECONDS (defaults 3 and 10). */
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

/**
 * Refuses, before any seeding, settings that would fail minutes later: wrk's `-d` takes whole
 * seconds only (0.5 or 0 print its usage), and no run leaves a median of nothing.
 */
function checkSettings() {
  if (!Number.isInteger(SECONDS) || SECONDS < 1)
    throw new Error(
      `bench: BENCH_SECONDS=${process.env.BENCH_SECONDS}: give whole seconds, 1 or more (wrk's -d)`,
    );
  if (!Number.isInteger(RUNS) || RUNS < 1)
    throw new Error(`bench: BENCH_RUNS=${process.env.BENCH_RUNS}: give a whole number of runs, 1 or more`);
}

/** The environment of a Placard server under test: its data in `dir`, any free port, warnings only. */
export const serverEnv = (dir, more = {}) => ({
  PLACARD_DATA_DIR: dir,
  PLACARD_PORT: '0',
  PLACARD_LOG_LEVEL: 'warn',
  ...more,
});

/**
 * Starts a server pinned to the server core, warms it up for 2 s (JIT, caches), measures it with
 * the wrk script for SECONDS, reads its RSS, and stops it. `scriptEnv` may be a function, called
 * before each of the two wrk runs, for a script that needs fresh data each time (serve tokens).
 * Besides wrk's figures, `cpuUsPerRequest`: the server's CPU time (user and system, every thread)
 * during the measured run, per request answered. Throughput moves with whatever else the machine
 * does (a virtual machine's stolen time, other tenants); the CPU a request costs moves much less,
 * so it is the steadier way to compare two builds in one run.
 *
 * `warm`: a longer or different warm-up, `{ seconds, scriptEnv }` (a server whose state builds up
 * with the traffic, such as the viewers frequency caps count, measured once it has).
 */
export async function measure(args, env, script, scriptEnv, warm = {}) {
  const envOf = typeof scriptEnv === 'function' ? scriptEnv : () => scriptEnv;
  const server = await startPinned(args, env);
  try {
    wrk(server.url, { seconds: warm.seconds ?? 2, script, scriptEnv: warm.scriptEnv ?? envOf() });
    const cpuBefore = server.cpuSeconds();
    const result = wrk(server.url, { seconds: SECONDS, script, scriptEnv: envOf() });
    const cpuUsPerRequest = ((server.cpuSeconds() - cpuBefore) * 1e6) / result.requests;
    return { ...result, cpuUsPerRequest, rssMb: server.rssKb() / 1024 };
  } finally {
    await server.stop();
  }
}

/** `measure` of `placard serve` from the CLI at `cli` (this build's, or another's). */
export const measureServer = (cli, env, script, scriptEnv, warm) =>
  measure([cli, 'serve', '--json'], env, script, scriptEnv, warm);

/** The node:http hello-world every throughput is a ratio to. */
export const HELLO = path.join(ROOT, 'bench/hello.mjs');

/** `measure` of the hello-world, loaded with the same wrk script as the server it is the baseline of. */
export const measureHello = (script, scriptEnv) => measure([HELLO], {}, script, scriptEnv);

/**
 * The `placard` CLI of a copy of the build with the partner API's rate limiter, browser check and
 * traffic judge (D15's verdicts) taken out: measured beside the real build, it shows what those
 * cost (the target: less than 5% of throughput with limits too high to trigger).
 */
export function unguardedCli() {
  const copy = patchedBuild('bench-unguarded', [
    { file: 'http/partner-api.js', from: 'if (fromBrowser(request)) {', to: 'if (false) {' },
    {
      file: 'http/partner-api.js',
      from: 'const decided = deps.limiter.take(operation, caller.apiKeyId, caller.policies[operation]);',
      to: 'const decided = 0;',
    },
    // The traffic judge (D15): every event counted, no click credits, no address rates.
    {
      file: 'serving/delivery.js',
      from: 'const judging = this.judge.judge(kind, request, caller.apiKeyId, now, at);',
      to: "const judging = { verdict: 'counted', reason: null, userAddress: null, pair: null, clicker: null, token: null };",
    },
  ]);
  return path.join(copy, 'cli/main.js');
}

/**
 * Measures this build against another in one run: each run hello, this, other, other, this, hello,
 * so both builds see the same state of the machine (a drift during the run weighs on both alike).
 * `measureThis` and `measureOther` each start one server and load it (`measureServer`). Prints
 * every run and the summary, writes the results to `.bench/<name>.json` and returns the summary:
 * both builds as ratios to the hello-world, their CPU per request, and this build over the other.
 */
export async function compareInOneRun({ name, what, other, hello, measureThis, measureOther }) {
  const mean = (a, b) => (a + b) / 2;
  const runs = [];
  for (let run = 1; run <= RUNS; run++) {
    const helloBefore = await hello();
    const thisBefore = await measureThis();
    const otherBefore = await measureOther();
    const otherAfter = await measureOther();
    const thisAfter = await measureThis();
    const helloAfter = await hello();
    const baseline = mean(helloBefore.rps, helloAfter.rps);
    const figures = (before, after) => ({
      ratio: mean(before.rps, after.rps) / baseline,
      cpuUsPerRequest: mean(before.cpuUsPerRequest, after.cpuUsPerRequest),
      p99: Math.max(before.p99, after.p99),
    });
    const current = figures(thisBefore, thisAfter);
    const others = figures(otherBefore, otherAfter);
    runs.push({
      helloBefore,
      thisBefore,
      otherBefore,
      otherAfter,
      thisAfter,
      helloAfter,
      current,
      other: others,
    });
    console.log(
      `run ${run}: hello ${helloBefore.rps.toFixed(0)}/${helloAfter.rps.toFixed(0)} req/s; ` +
        `this build ${thisBefore.rps.toFixed(0)}/${thisAfter.rps.toFixed(0)} (${pct(current.ratio)}, ` +
        `${current.cpuUsPerRequest.toFixed(1)} µs CPU/request); ` +
        `other build ${otherBefore.rps.toFixed(0)}/${otherAfter.rps.toFixed(0)} (${pct(others.ratio)}, ` +
        `${others.cpuUsPerRequest.toFixed(1)} µs CPU/request)`,
    );
  }
  const summary = {
    method: `server on core 0, wrk -t1 -c50 -d${SECONDS}s on core 1, ${what}, each run hello/this/other/other/this/hello, median of ${RUNS} runs`,
    other,
    helloRps: median(runs.map((r) => mean(r.helloBefore.rps, r.helloAfter.rps))),
    thisRatio: median(runs.map((r) => r.current.ratio)),
    otherRatio: median(runs.map((r) => r.other.ratio)),
    thisToOther: median(runs.map((r) => r.current.ratio / r.other.ratio)),
    thisCpuUsPerRequest: median(runs.map((r) => r.current.cpuUsPerRequest)),
    otherCpuUsPerRequest: median(runs.map((r) => r.other.cpuUsPerRequest)),
    runs,
  };
  const file = writeResults(name, summary);
  console.log(`
${name}, this build against ${other}, ${summary.method}
  hello-world baseline          ${summary.helloRps.toFixed(0)} req/s
  this build                    ${pct(summary.thisRatio)} of baseline, ${summary.thisCpuUsPerRequest.toFixed(1)} µs CPU per request
  other build                   ${pct(summary.otherRatio)} of baseline, ${summary.otherCpuUsPerRequest.toFixed(1)} µs CPU per request
  this ÷ other                  ${pct(summary.thisToOther)}
results: ${path.relative(ROOT, file)}`);
  return summary;
}
