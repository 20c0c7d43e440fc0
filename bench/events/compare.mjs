// bench/events/compare.mjs: `npm run bench:events -- --compare <checkout>` measures this build's
// tracking on SQLite (guards and serve tokens on, as shipped) against the build of another checkout
// of Placard (its root, built with `npm run build`) in the same run. Each build serves its own
// store, seeded by its own code (an older build may not open a newer store), so a change of schema
// between the two is measured too.
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { moneyOf, SCRIPT, sqliteTarget, verdictsOf } from './load.mjs';

const given = process.argv[process.argv.indexOf('--compare') + 1];
if (given === undefined) throw new Error('--compare needs the root of another checkout, built');
const root = path.resolve(given);
const otherCli = path.join(root, 'apps/server/dist/cli/main.js');
if (!fs.existsSync(otherCli)) throw new Error(`no build at ${otherCli}: run npm run build in ${root}`);
const { seedCampaigns: seedOther } = await import(path.join(root, 'bench/seed.mjs'));

const dir = bench.tempDir('placard-bench-events-compare-');
// Removed however the benchmark ends, a failed measurement included.
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const current = await sqliteTarget(dir, 'this', undefined);
const other = await sqliteTarget(dir, 'other', seedOther);
await bench.compareInOneRun({
  name: 'events-compare',
  what: 'tracking on SQLite with guards and serve tokens, impressions:clicks 20:1',
  other: root,
  hello: () => bench.measureHello(SCRIPT, current.load.scriptEnv),
  measureThis: () => bench.measureServer(bench.CLI, current.env, SCRIPT, current.load.scriptEnv),
  measureOther: () => bench.measureServer(otherCli, other.env, SCRIPT, other.load.scriptEnv),
});
// What each build's judge made of its load: nearly all billable, or one of them measured refusals.
for (const [label, { load }] of Object.entries({ this: current, other })) {
  console.log(
    `${label} build's events by verdict and reason: ${JSON.stringify(await verdictsOf(load.databaseUrl))}; ` +
      `money: ${JSON.stringify(await moneyOf(load.databaseUrl))}`,
  );
}
