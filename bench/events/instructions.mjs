// bench/events/instructions.mjs: `npm run bench:events -- --instructions` counts the machine
// instructions the store spends per batch of 35 tracking events, with money on and off, under
// valgrind's callgrind. A count, unlike a throughput, comes out nearly the same however busy the
// machine is (within about 6%, from when the JIT compiles what), so it can judge a change of a few
// per cent on a host too noisy for wrk. It runs `store-batches.mjs` with 100 and with 400 batches
// for each setting and divides the difference by 300, which leaves out start-up and seeding. Four
// runs of a few minutes each, two at a time. Needs valgrind (Debian's package).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as bench from '../lib.mjs';

const run = promisify(execFile);
const SCRIPT = path.join(bench.ROOT, 'bench/events/store-batches.mjs');
const FEW = 100;
const MANY = 400;

/** Instructions valgrind counted for the store-batches script with `batches` batches. */
async function instructions(money, batches) {
  const dir = bench.tempDir('placard-bench-instructions-');
  try {
    const { stderr } = await run(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`,
        process.execPath,
        SCRIPT,
      ],
      // BENCH_MONEY as well, for a checkout whose bench/seed.mjs reads only that.
      {
        env: { ...process.env, MONEY: String(money), BENCH_MONEY: String(money), BATCHES: String(batches) },
        maxBuffer: 1 << 26,
      },
    );
    const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr);
    if (!refs) throw new Error(`valgrind printed no instruction count:\n${stderr.slice(-2_000)}`);
    return Number(refs[1].replaceAll(',', ''));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Instructions per batch for one setting: the two runs side by side on the machine's two cores. */
async function perBatch(money) {
  const [few, many] = await Promise.all([instructions(money, FEW), instructions(money, MANY)]);
  return (many - few) / (MANY - FEW);
}

const on = await perBatch(true);
const off = await perBatch(false);
const summary = {
  method: `valgrind --tool=callgrind on store-batches.mjs, (instructions at ${MANY} batches - at ${FEW}) / ${MANY - FEW}, 35 events a batch`,
  moneyOnPerBatch: on,
  moneyOffPerBatch: off,
  moneyOnPerEvent: on / 35,
  moneyOffPerEvent: off / 35,
  moneyCost: on / off - 1,
};
const file = bench.writeResults('events-instructions', summary);
console.log(`
events-instructions, ${summary.method}
  money on     ${(on / 1e6).toFixed(2)} M instructions a batch, ${(on / 35 / 1e3).toFixed(0)} k an event
  money off    ${(off / 1e6).toFixed(2)} M instructions a batch, ${(off / 35 / 1e3).toFixed(0)} k an event
  money costs  ${bench.pct(summary.moneyCost)} more
results: ${path.relative(bench.ROOT, file)}`);
