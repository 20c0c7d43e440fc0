// bench/storage/key-marks-migration.mjs: how long migration 032 takes on a SQLite store holding a
// day of idempotency keys. It reads every key once, in rowid order, to mark them for retention
// (store/idempotency-marks-sqlite.ts) before it drops their time index, and SQLite stores migrate
// as the server starts, so this is how much later an upgraded server starts, once. Builds a store
// migrated to 031, fills it with BENCH_KEYS keys (default 2,000,000) spread over 24 hours, random
// as partners' keys are, then times the product's own `migrate` to the latest, in this process on
// core 0. Run with `node scripts/setup.mjs && node bench/storage/key-marks-migration.mjs`; the
// store is removed at the end, an interrupted run's too.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect, loadSqliteDriver } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { SERVER_CORE, tempDir, writeResults } from '../lib.mjs';

const KEYS = Number(process.env.BENCH_KEYS ?? 2_000_000);
if (!(KEYS >= 1)) throw new Error('BENCH_KEYS must be 1 or more');
const DAY = 24 * 60 * 60 * 1000;
const START = Date.parse('2026-06-01T00:00:00Z');
execFileSync('taskset', ['-a', '-p', '-c', SERVER_CORE, String(process.pid)], { stdio: 'ignore' });
const dir = tempDir('placard-bench-key-marks-');
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));
const file = path.join(dir, 'store.db');

const before = new Store(connect(`sqlite:${file}`));
await before.migrate('031-charges-in-rollup-deltas');
await before.close();
// The keys go in through the driver in one transaction: the store's own path would take minutes.
const Database = loadSqliteDriver();
const raw = new Database(file);
const insert = raw.prepare(
  'insert into idempotency_keys (api_key_id, key, created_at, fingerprint) values (?, ?, ?, ?)',
);
raw.transaction(() => {
  for (let i = 0; i < KEYS; i++)
    insert.run(
      1 + (i % 3),
      randomUUID(),
      START + Math.floor((i * DAY) / KEYS),
      '["impression",1,"header_banner",null,null]',
    );
})();
raw.close();

const store = new Store(connect(`sqlite:${file}`));
const started = process.hrtime.bigint();
await store.migrate();
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const marks = await store.db
  .selectFrom('idempotency_key_marks')
  .select((eb) => eb.fn.countAll().as('n'))
  .executeTakeFirstOrThrow();
await store.close();
console.log(
  `migration 032 on ${KEYS.toLocaleString('en')} idempotency keys over 24 hours: ${Math.round(ms).toLocaleString('en')} ms, ${marks.n} marks`,
);
writeResults('key-marks-migration', { keys: KEYS, ms, marks: Number(marks.n) });
