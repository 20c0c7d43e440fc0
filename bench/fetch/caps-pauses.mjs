// What pauses a capped fetch meets: one server (half its campaigns capped, or none with
// `--uncapped`) run as `run.mjs --caps` runs it (15 s at full load, then the steady load for
// BENCH_SECONDS), with V8's `--trace-gc` and `loop-delay.cjs` preloaded. Prints, for the steady
// load, the full collections (mark-compact) and their pauses, the young ones' count and longest
// pause, the event loop's longest delay in each second, and how `arrayBuffers` moved (a buffer
// counts whole from when it is taken, written or not).
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { capHalfTheCampaigns, seedStore } from '../seed.mjs';

const capped = !process.argv.includes('--uncapped');
const SCRIPT = path.join(bench.ROOT, 'bench/fetch/fetch.lua');
const WARM_SECONDS = Number(process.env.BENCH_CAPS_WARM_SECONDS ?? 15);

bench.prepareMachine();
const dir = bench.tempDir('placard-bench-pauses-');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const databaseUrl = `sqlite:${path.join(dir, 'placard.db')}`;
const key = await seedStore(databaseUrl, 1_000);
if (capped) await capHalfTheCampaigns(databaseUrl);

/** What the server printed, each line with the phase it came in. */
const lines = [];
let phase = 'start';
const server = await bench.startPinned(
  ['--trace-gc', '-r', path.join(bench.ROOT, 'bench/fetch/loop-delay.cjs'), bench.CLI, 'serve', '--json'],
  bench.serverEnv(dir),
  { onLine: (line) => lines.push({ phase, line }) },
);
const url = server.url;

const viewers = { PLACARD_BENCH_KEY: key, PLACARD_BENCH_VIEWERS: '100000' };
try {
  phase = 'warm';
  await bench.wrkInBackground(url, { seconds: WARM_SECONDS, script: SCRIPT, scriptEnv: viewers });
  phase = 'steady';
  const steady = await bench.wrkInBackground(url, {
    seconds: bench.SECONDS,
    script: SCRIPT,
    scriptEnv: { ...viewers, PLACARD_BENCH_PAUSE_MS: '5' },
  });
  phase = 'after';
  const during = lines.filter((l) => l.phase === 'steady').map((l) => l.line);
  const pauseOf = (line) => Number(/MB, ([\d.]+) \/ [\d.]+ ms/.exec(line)?.[1] ?? NaN);
  const full = during.filter((line) => line.includes('Mark-Compact')).map(pauseOf);
  const young = during.filter((line) => line.includes('Scavenge')).map(pauseOf);
  const seconds = during
    .filter((line) => line.startsWith('{"loopDelayMaxMs"'))
    .map((line) => JSON.parse(line));
  const fixed = (n) => n.toFixed(1);
  console.log(`fetch pauses, ${capped ? 'half the campaigns capped' : 'no campaign capped'}, 100,000 viewers; the steady load's ${bench.SECONDS} s after ${WARM_SECONDS} s at full load
  steady load              ${steady.rps.toFixed(0)} req/s, p99 ${steady.p99.toFixed(2)} ms
  full collections         ${full.length}${full.length > 0 ? `, pauses ${full.map(fixed).join(', ')} ms` : ''}
  young collections        ${young.length}, longest pause ${young.length > 0 ? fixed(Math.max(...young)) : '-'} ms
  loop's longest delay     ${seconds.map((s) => fixed(s.loopDelayMaxMs)).join(' ')} ms (each second)
  arrayBuffers             ${seconds.length > 0 ? `${fixed(seconds[0].arrayBuffersMb)} to ${fixed(seconds.at(-1).arrayBuffersMb)} MiB (buffers count whole when taken, written or not)` : '-'}`);
} finally {
  await server.stop();
}
