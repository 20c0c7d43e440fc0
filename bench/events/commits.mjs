// bench/events/commits.mjs (`npm run bench:events -- --commits`): where a SQLite server's time
// goes under the tracking load (the same load as run.mjs: fresh serve tokens, clicks 20:1), read
// from the server itself rather than guessed from a profile. For each of RUNS new server
// processes (the real build, pinned as `measure` pins it), over the measured wrk run:
// - how busy the server's core was: its CPU time (user and system, every thread) over the run's
//   length, and the part of it in the kernel (sockets, writes, fsync). A core near 100% busy is
//   limited by CPU per request; one well below it waits (fsync);
// - the group commits, from /metrics: events per commit, the share of the run spent inside commit
//   transactions and their mean length (SQLite's commits run on the main thread);
// - the bytes the server wrote per request (/proc/<pid>/io: the write-ahead log and the answers);
// - which tables and indexes those bytes are pages of, per commit, from the write-ahead log's
//   frames of the last few dozen commits (wal-pages.mjs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, median, pct, RUNS, SECONDS, startPinned, tempDir, wrk, writeResults } from '../lib.mjs';
import { prepareLoad, SCRIPT } from './load.mjs';
import { walPagesByTree } from './wal-pages.mjs';
import { BENCH_TOKEN_SECRET } from './tokens.mjs';

const dir = tempDir('placard-bench-commits-');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const databaseUrl = `sqlite:${path.join(dir, 'placard.db')}`;
const load = await prepareLoad('sqlite', databaseUrl, dir);
const env = { PLACARD_DATA_DIR: dir, PLACARD_DATABASE_URL: databaseUrl, PLACARD_LOG_LEVEL: 'warn' };
// An operator token, to read /metrics as an operator's Prometheus would.
const adminToken = JSON.parse(
  execFileSync(process.execPath, [CLI, 'tokens', 'create', '--label', 'bench', '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  }),
).token;

/** The group-commit series of the server's /metrics: commits, seconds inside them, events stored. */
async function commitMetrics(url) {
  const answer = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (!answer.ok) throw new Error(`/metrics answered ${answer.status}`);
  const text = await answer.text();
  const value = (name) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    commits: value('placard_event_commit_seconds_count'),
    seconds: value('placard_event_commit_seconds_sum'),
    events: value('placard_event_batch_size_sum'),
  };
}

/** The process's CPU time in the kernel so far (stime, the 15th field of /proc/<pid>/stat), in seconds. */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
function systemSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) / TICKS_PER_SECOND;
}

/** Bytes the process has passed to write(2) and friends so far (files and sockets). */
const bytesWritten = (pid) => Number(/^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);

async function measured() {
  const server = await startPinned([CLI, 'serve', '--json'], {
    ...env,
    PLACARD_PORT: '0',
    PLACARD_TOKEN_SECRET: BENCH_TOKEN_SECRET,
  });
  try {
    wrk(server.url, { seconds: 2, script: SCRIPT, scriptEnv: load.scriptEnv() });
    // Read before wrk starts: it reads its token file first, while the server idles.
    const scriptEnv = load.scriptEnv();
    const [before, cpuBefore, systemBefore, writtenBefore] = [
      await commitMetrics(server.url),
      server.cpuSeconds(),
      systemSeconds(server.pid),
      bytesWritten(server.pid),
    ];
    const result = wrk(server.url, { seconds: SECONDS, script: SCRIPT, scriptEnv });
    const [after, cpuAfter, systemAfter, writtenAfter] = [
      await commitMetrics(server.url),
      server.cpuSeconds(),
      systemSeconds(server.pid),
      bytesWritten(server.pid),
    ];
    // While the server still runs: stopping it checkpoints and removes the log.
    const wal = walPagesByTree(path.join(dir, 'placard.db'), path.join(dir, `copy-${runs.length + 1}`));
    // The run's length from wrk's own count, so the time wrk spent reading its file is left out.
    const runSeconds = result.requests / result.rps;
    const commits = after.commits - before.commits;
    return {
      rps: result.rps,
      coreBusy: (cpuAfter - cpuBefore) / runSeconds,
      inKernel: (systemAfter - systemBefore) / runSeconds,
      eventsPerCommit: (after.events - before.events) / commits,
      inCommits: (after.seconds - before.seconds) / runSeconds,
      commitMs: ((after.seconds - before.seconds) * 1000) / commits,
      bytesPerRequest: (writtenAfter - writtenBefore) / result.requests,
      pagesPerCommit: Object.fromEntries(
        [...wal.byTree]
          .sort((a, b) => b[1] - a[1])
          .map(([tree, frames]) => [tree, Number((frames / wal.commits).toFixed(2))]),
      ),
      walSample: { commits: wal.commits, frames: wal.frames },
    };
  } finally {
    await server.stop();
  }
}

const runs = [];
for (let run = 1; run <= RUNS; run++) {
  const m = await measured();
  runs.push(m);
  console.log(
    `run ${run}: ${m.rps.toFixed(0)} req/s; server core ${pct(m.coreBusy)} busy (${pct(m.inKernel)} in the kernel); ${m.eventsPerCommit.toFixed(1)} events ` +
      `per commit, ${m.commitMs.toFixed(2)} ms each, ${pct(m.inCommits)} of the time in commits; ` +
      `${(m.bytesPerRequest / 1024).toFixed(1)} KiB written per request`,
  );
  const trees = Object.entries(m.pagesPerCommit)
    .slice(0, 8)
    .map(([tree, pages]) => `${tree} ${pages}`)
    .join(', ');
  console.log(
    `  pages per commit (last ${m.walSample.commits} commits, ${(m.walSample.frames / m.walSample.commits).toFixed(1)} in all): ${trees}`,
  );
}
const mid = (key) => median(runs.map((m) => m[key]));
const summary = {
  rps: mid('rps'),
  coreBusy: mid('coreBusy'),
  inKernel: mid('inKernel'),
  eventsPerCommit: mid('eventsPerCommit'),
  commitMs: mid('commitMs'),
  inCommits: mid('inCommits'),
  bytesPerRequest: mid('bytesPerRequest'),
  runs,
};
const file = writeResults('events-commits', summary);
console.log(`
SQLite under the tracking load, median of ${RUNS} runs of ${SECONDS} s (server on one core):
  ${summary.rps.toFixed(0)} req/s; the server's core ${pct(summary.coreBusy)} busy (its CPU time over the run), ${pct(summary.inKernel)} in the kernel
  ${summary.eventsPerCommit.toFixed(1)} events per commit, ${summary.commitMs.toFixed(2)} ms per commit, ${pct(summary.inCommits)} of the run inside commits
  ${(summary.bytesPerRequest / 1024).toFixed(1)} KiB written per request (write-ahead log and answers)
results: ${file}`);
