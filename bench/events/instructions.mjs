// bench/events/instructions.mjs: `npm run bench:events -- --instructions` counts the machine
// instructions the store spends per batch of 35 tracking events, with money on and off, under
// valgrind's callgrind. A count, unlike a throughput, comes out nearly the same however busy the
// machine is, so it can judge a change of a few per cent on a host too noisy for wrk (nearly: run it
// with nothing else on the machine, see bench/events/README.md). It runs
// `store-batches.mjs` with 100 and with 400 batches for each setting and divides the difference by
// 300, which leaves out start-up and seeding. It counts the main thread, where the batches run:
// V8's background threads compile and collect garbage when their turn comes, which moved the count of
// all threads by up to 6% between runs of one build (both are printed). Four runs of a few minutes
// each, two at a time. Needs valgrind (Debian's package).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as bench from '../lib.mjs';

const run = promisify(execFile);
const SCRIPT = path.join(bench.ROOT, 'bench/events/store-batches.mjs');
const FEW = 100;
const MANY = 400;

/**
 * Instructions valgrind counted for the store-batches script with `batches` batches: on its main
 * thread (callgrind's file for thread 1) and on all its threads.
 */
async function instructions(money, batches) {
  const dir = bench.tempDir('placard-bench-instructions-');
  try {
    const out = path.join(dir, 'callgrind.out');
    const { stderr } = await run(
      'valgrind',
      ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${out}`, process.execPath, SCRIPT],
      // BENCH_MONEY as well, for a checkout whose bench/seed.mjs reads only that.
      {
        env: { ...process.env, MONEY: String(money), BENCH_MONEY: String(money), BATCHES: String(batches) },
        maxBuffer: 1 << 26,
      },
    );
    const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr);
    if (!refs) throw new Error(`valgrind printed no instruction count:\n${stderr.slice(-2_000)}`);
    const main = /^summary:\s+(\d+)/m.exec(fs.readFileSync(`${out}-01`, 'utf8'));
    if (!main) throw new Error(`callgrind wrote no summary for the main thread in ${out}-01`);
    return { main: Number(main[1]), all: Number(refs[1].replaceAll(',', '')) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Instructions per batch for one setting: the two runs side by side on the machine's two cores. */
async function perBatch(money) {
  const [few, many] = await Promise.all([instructions(money, FEW), instructions(money, MANY)]);
  return { main: (many.main - few.main) / (MANY - FEW), all: (many.all - few.all) / (MANY - FEW) };
}

const on = await perBatch(true);
const off = await perBatch(false);
const summary = {
  method: `valgrind --tool=callgrind on store-batches.mjs, (instructions at ${MANY} batches - at ${FEW}) / ${MANY - FEW}, 35 events a batch, main thread (all threads beside)`,
  moneyOnPerBatch: on.main,
  moneyOffPerBatch: off.main,
  moneyOnPerEvent: on.main / 35,
  moneyOffPerEvent: off.main / 35,
  moneyCost: on.main / off.main - 1,
  allThreads: { moneyOnPerBatch: on.all, moneyOffPerBatch: off.all, moneyCost: on.all / off.all - 1 },
};
const file = bench.writeResults('events-instructions', summary);
const millions = (count) => `${(count / 1e6).toFixed(2)} M`;
console.log(`
events-instructions, ${summary.method}
                 main thread                                 all threads
  money on     ${millions(on.main)} a batch, ${(on.main / 35 / 1e3).toFixed(0)} k an event            ${millions(on.all)} a batch
  money off    ${millions(off.main)} a batch, ${(off.main / 35 / 1e3).toFixed(0)} k an event            ${millions(off.all)} a batch
  money costs  ${bench.pct(summary.moneyCost)} more                                 ${bench.pct(summary.allThreads.moneyCost)} more
results: ${path.relative(bench.ROOT, file)}`);
