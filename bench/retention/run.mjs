// bench/retention: how long one retention statement holds a SQLite store (and so the server's only
// thread, which runs SQLite's statements synchronously), for the product's chunk size, larger ones
// and everything in one statement. The store holds ten minutes' worth of expired rows at a thousand a
// second (what one retention pass finds) beside as many live ones. Each measurement starts from a
// copy of the same seeded file, so every one deletes the same rows. Figures are milliseconds on
// this machine, not ratios: this is the length of a stall, not a throughput.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { RETENTION_CHUNK } from '../../apps/server/dist/services/retention-job.js';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { median, RUNS, tempDir, writeResults } from '../lib.mjs';

const EXPIRED = 600_000;
const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-11-23T12:00:00Z');
const EVENTS_BEFORE = NOW - 90 * DAY;
/** Chunk sizes measured: the product's, larger ones and all at once; BENCH_CHUNKS=100,500 for others. */
const CHUNKS = process.env.BENCH_CHUNKS?.split(',').map(Number) ?? [
  RETENTION_CHUNK,
  1_000,
  5_000,
  2 * EXPIRED,
];

/** A deterministic generator, so every run seeds the same keys. */
function generator(seed) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state.toString(36);
  };
}

const open = async (file) => {
  const store = new Store(connect(`sqlite:${file}`));
  await store.migrate();
  return store;
};

async function insertAll(store, table, count, row) {
  for (let i = 0; i < count; i += 500) {
    const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => row(i + j));
    await store.db.insertInto(table).values(rows).execute();
  }
}

/** Seeds one file with expired and live rows of both tables; returns its path. */
async function seed(dir) {
  const file = path.join(dir, 'seed.db');
  const store = await open(file);
  const next = generator(7);
  // Partners, keys and campaigns are not seeded: the rows are deleted, never joined.
  await sql`pragma foreign_keys = off`.execute(store.db);
  const keyAt = (i) => (i < EXPIRED ? NOW - DAY - 600_000 + i : NOW - 1_000);
  await insertAll(store, 'idempotency_keys', 2 * EXPIRED, (i) => ({
    api_key_id: 1 + (i % 3),
    key: `${next()}-${i}`,
    created_at: keyAt(i),
  }));
  const places = ['header_banner', 'sidebar_top', 'footer'];
  await insertAll(store, 'events', 2 * EXPIRED, (i) => ({
    kind: i % 21 === 0 ? 'click' : 'impression',
    campaign_id: 1 + ((i * 7_919) % 1_000),
    placement_id: places[i % 3],
    country: i % 4 === 0 ? null : 'US',
    device: i % 3 === 0 ? null : 'mobile',
    partner_id: 1,
    api_key_id: 1,
    occurred_at: i < EXPIRED ? EVENTS_BEFORE - 600_000 + i : NOW - 1_000,
    verdict: 'counted',
    idempotency_key: `${next()}-${i}`,
  }));
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
  await store.close();
  return file;
}

/** Prunes a copy of the seed with one statement per chunk; returns each statement's duration. */
async function measure(seedFile, dir, statement, chunk) {
  const file = path.join(dir, 'measured.db');
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  fs.copyFileSync(seedFile, file);
  const store = await open(file);
  // One write first: a new connection's first transaction sets up the WAL, which is no part of
  // a retention pass on a running server.
  await store.db
    .insertInto('idempotency_keys')
    .values({ api_key_id: 1, key: 'warm-up', created_at: NOW })
    .execute();
  const prune =
    statement === 'events'
      ? () => store.pruneEvents(EVENTS_BEFORE, chunk)
      : () => store.pruneIdempotencyKeys(NOW, chunk);
  const durations = [];
  let deleted = 0;
  try {
    for (;;) {
      const started = performance.now();
      const count = await prune();
      durations.push(performance.now() - started);
      deleted += count;
      if (count < chunk) break;
    }
  } finally {
    await store.close();
  }
  if (deleted !== EXPIRED) throw new Error(`${statement}: deleted ${deleted} rows, expected ${EXPIRED}`);
  return durations;
}

const dir = tempDir('placard-bench-retention-');
try {
  console.log(`bench: seeding ${EXPIRED} expired and ${EXPIRED} live rows of each table…`);
  const seedFile = await seed(dir);
  const results = [];
  for (const statement of ['events', 'idempotency keys']) {
    for (const chunk of CHUNKS) {
      const runs = [];
      for (let run = 0; run < RUNS; run++) {
        const durations = await measure(seedFile, dir, statement, chunk);
        const sorted = [...durations].sort((a, b) => a - b);
        runs.push({
          statements: durations.length,
          median: median(durations),
          p99: sorted[Math.floor(sorted.length * 0.99)],
          max: sorted[sorted.length - 1],
          first: durations[0],
        });
      }
      const row = {
        statement,
        chunk: chunk >= EXPIRED ? 'all' : chunk,
        statements: runs[0].statements,
        medianMs: median(runs.map((r) => r.median)),
        p99Ms: median(runs.map((r) => r.p99)),
        maxMs: median(runs.map((r) => r.max)),
        firstMs: median(runs.map((r) => r.first)),
        runs,
      };
      results.push(row);
      console.log(
        `${statement.padEnd(16)} chunk ${String(row.chunk).padStart(5)}: ${String(row.statements).padStart(4)} statements, ` +
          `median ${row.medianMs.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, longest ${row.maxMs.toFixed(1)} ms, ` +
          `first ${row.firstMs.toFixed(1)} ms (medians of ${RUNS} runs)`,
      );
    }
  }
  console.log(
    `results: ${path.relative(process.cwd(), writeResults('retention', { expired: EXPIRED, results }))}`,
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
