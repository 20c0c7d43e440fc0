// bench/storage/page-sizes.mjs: what SQLite's page size costs reads. Builds a table shaped like
// the rollups (2,000,000 rows of 200 a minute, keyed by minute first, with the product's index by
// campaign and minute) at pages of 4,096, 2,048 and 1,024 bytes, then times, in this process on
// core 0, a sum over the whole table by campaign (a long report), a day of one campaign through
// the index (a short one) and 100,000 lookups of rows that exist by their key (a fold's), the
// three sizes in turn, median of BENCH_RUNS rounds (default 3). Tracking writes fewer bytes at
// smaller pages (`npm run bench:events -- --commits`); this is the other side. Run with
// `node scripts/setup.mjs && node bench/storage/page-sizes.mjs`; the files are removed at the end,
// an interrupted run's too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadSqliteDriver } from '../../apps/server/dist/store/connect.js';
import { median, RUNS, SERVER_CORE, tempDir, writeResults } from '../lib.mjs';

const ROWS = 2_000_000;
const MINUTE = 60_000;
const Database = loadSqliteDriver();
execFileSync('taskset', ['-a', '-p', '-c', SERVER_CORE, String(process.pid)], { stdio: 'ignore' });
const dir = tempDir('placard-bench-page-sizes-');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));
if (!(RUNS >= 1)) throw new Error('BENCH_RUNS must be 1 or more');
/** One row's key in this many is kept to look up: 100,000 rows that exist. */
const LOOKED_UP_EVERY = ROWS / 100_000;

/** Milliseconds per call of `run`, the median of `times` calls after one to warm the cache. */
function timed(times, run) {
  run(-1);
  const each = [];
  for (let i = 0; i < times; i++) {
    const start = process.hrtime.bigint();
    run(i);
    each.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(each);
}

/** A rollup-shaped table of ROWS rows in a new file with pages of `pageSize` bytes, open. */
function build(pageSize) {
  const file = path.join(dir, `rollups-${pageSize}.db`);
  const db = new Database(file);
  db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.exec(`create table rollups (minute integer, campaign_id integer, partner_id integer,
    placement_id text, country text, device text, kind text, verdict text, count integer,
    spend_micros integer, primary key (minute, campaign_id, partner_id, placement_id, country, device,
    kind, verdict));
    create index rollups_campaign on rollups (campaign_id, minute)`);
  const insert = db.prepare('insert or ignore into rollups values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  let seed = 1;
  const random = (n) => Math.floor(((seed = (seed * 48271) % 2147483647) / 2147483647) * n);
  const keys = [];
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const key = [
        Math.floor(i / 200) * MINUTE,
        random(1000),
        random(5),
        `slot-${random(4)}`,
        ['US', 'DE', 'FR', ''][random(4)],
        ['mobile', 'desktop', ''][random(3)],
        'impression',
        'counted',
      ];
      insert.run(...key, 3, 1000);
      if (i % LOOKED_UP_EVERY === 0) keys.push(key);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { pageSize, db, keys, megabytes: Math.round(fs.statSync(file).size / 1e5) / 10 };
}

/** The three reads' times on one table: ms for the two sums, µs for a lookup. */
function measure({ db, keys }) {
  const byCampaign = db.prepare(
    'select campaign_id, sum(count), sum(spend_micros) from rollups where minute between ? and ? group by campaign_id',
  );
  const oneDay = db.prepare(
    'select sum(count) from rollups where minute between ? and ? and campaign_id = ?',
  );
  const byKey = db.prepare(`select count from rollups where minute = ? and campaign_id = ? and partner_id = ?
    and placement_id = ? and country = ? and device = ? and kind = ? and verdict = ?`);
  return {
    wholeTableMs: timed(3, () => byCampaign.all(0, Number.MAX_SAFE_INTEGER)),
    oneDayMs: timed(50, (i) => oneDay.get(i * 20 * MINUTE, i * 20 * MINUTE + 1440 * MINUTE, 7)),
    lookupUs:
      timed(3, () => {
        for (const key of keys) byKey.get(...key);
      }) *
      (1000 / keys.length),
  };
}

// The three sizes measured in turn, RUNS times, so the host's drift weighs on all alike.
const tables = [4096, 2048, 1024].map(build);
const runs = [];
for (let run = 0; run < RUNS; run++) runs.push(tables.map(measure));
const results = tables.map(({ pageSize, megabytes, db }, i) => {
  db.close();
  const of = (key) => median(runs.map((run) => run[i][key]));
  return {
    pageSize,
    megabytes,
    wholeTableMs: of('wholeTableMs'),
    oneDayMs: of('oneDayMs'),
    lookupUs: of('lookupUs'),
  };
});
console.log(
  `SQLite reads at each page size, ${ROWS.toLocaleString('en')} rollup-shaped rows, core ${SERVER_CORE}:`,
);
for (const r of results)
  console.log(
    `  ${String(r.pageSize).padStart(5)} bytes: ${r.megabytes} MB; whole table by campaign ${r.wholeTableMs.toFixed(0)} ms, ` +
      `a day of one campaign ${r.oneDayMs.toFixed(1)} ms, a row by its key ${r.lookupUs.toFixed(2)} µs`,
  );
writeResults('page-sizes', { rows: ROWS, results });
