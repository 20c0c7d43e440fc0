// bench/events/money.mjs: `npm run bench:events -- --money` measures what money (D18) costs the
// write path: this build's tracking on SQLite (guards and serve tokens on, as shipped) with money on
// (the store seeded with prices and a revenue share, so every billable event is charged and earns in
// its commit) against the same build with money off (the same store without prices), in one run.
// "this" is money on, "other" money off.
import fs from 'node:fs';
import * as bench from '../lib.mjs';
import { seedCampaigns } from '../seed.mjs';
import { moneyOf, SCRIPT, sqliteTarget, verdictsOf } from './load.mjs';

const dir = bench.tempDir('placard-bench-events-money-');
// Removed however the benchmark ends, a failed measurement included.
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

/** A seed with money on or off (prices and a revenue share, or neither). */
const seeded = (money) => (databaseUrl, count) => seedCampaigns(databaseUrl, count, { money });
const on = await sqliteTarget(dir, 'money-on', seeded(true));
const off = await sqliteTarget(dir, 'money-off', seeded(false));
await bench.compareInOneRun({
  name: 'events-money',
  what: 'tracking on SQLite with guards and serve tokens, impressions:clicks 20:1, money on (this) and off (other)',
  other: 'the same build with money off',
  hello: () => bench.measureHello(SCRIPT, on.load.scriptEnv),
  measureThis: () => bench.measureServer(bench.CLI, on.env, SCRIPT, on.load.scriptEnv),
  measureOther: () => bench.measureServer(bench.CLI, off.env, SCRIPT, off.load.scriptEnv),
});
// What the judge made of each load, and what money on charged (money off must show none).
for (const [label, { load }] of Object.entries({ 'money on': on, 'money off': off })) {
  console.log(
    `${label}: events by verdict and reason: ${JSON.stringify(await verdictsOf(load.databaseUrl))}; ` +
      `money: ${JSON.stringify(await moneyOf(load.databaseUrl))}`,
  );
}
