// bench/retention: how long one retention statement holds a SQLite store (and so the server's only
// thread, which runs SQLite's statements synchronously), for the product's chunk size, larger ones
// and everything in one statement. The store holds ten minutes' worth of expired rows at a thousand a
// second (what one retention pass finds) beside as many live ones. Each measurement starts from a
// copy of the same seeded file, so every one deletes the same rows. Figures are milliseconds on
// this machine, not ratios: this is the length of a stall, not a throughput.
//
// On PostgreSQL, raw events are partitioned by day and retention drops a day whole: the second part
// seeds one day's partition with a million events and times its detach and drop (the product's
// `dropExpiredEventPartitions`), next to today's chunked deletes of the same million rows from an
// unpartitioned table, and prints the partition's size (store growth per million events).
// BENCH_RETENTION=sqlite or =postgres runs one part only.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { RETENTION_CHUNK } from '../../apps/server/dist/jobs/retention-job.js';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { adminQuery, median, mediansOf, postgresUrl, RUNS, tempDir, writeResults } from '../lib.mjs';

const EXPIRED = 600_000;
/** Events in the PostgreSQL day partition dropped whole, and deleted in chunks for comparison. */
const DAY_EVENTS = 1_000_000;
const PARTS = (process.env.BENCH_RETENTION ?? 'sqlite,postgres').split(',');
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
  // The mark a pass 24 hours before left over the expired keys (store/idempotency-marks-sqlite.ts):
  // they arrived first, so they hold the first rowids.
  await store.db
    .insertInto('idempotency_key_marks')
    .values({ at: keyAt(EXPIRED - 1), last_rowid: EXPIRED })
    .execute();
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

/** SQLite: each chunk size's statements over a copy of the same seeded file. */
async function sqliteResults() {
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
          ...mediansOf(runs, { medianMs: 'median', p99Ms: 'p99', maxMs: 'max', firstMs: 'first' }),
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
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The columns of a million events of one day, generated in the database: a click in 21, three
 * placements, a thousand campaigns, some without country or device, a random Idempotency-Key each.
 */
const generatedEvents = (day) => sql`select
    case when g % 21 = 0 then 'click' else 'impression' end, 1 + (g::bigint * 7919) % 1000,
    (array['header_banner', 'sidebar_top', 'footer'])[1 + g % 3],
    case when g % 4 = 0 then null else 'US' end, case when g % 3 = 0 then null else 'mobile' end,
    1, 1, ${day}::bigint + (g::bigint * ${DAY}) / ${DAY_EVENTS}, 'counted', md5(g::text)
  from generate_series(0, ${DAY_EVENTS - 1}) as g`;

const EVENT_COLUMNS = sql.raw(`(kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
  occurred_at, verdict, idempotency_key)`);

/**
 * PostgreSQL: per run, seeds the first daily partition with DAY_EVENTS events and an unpartitioned
 * table (the schema before migration 016: a key on id, an index on occurred_at) with the same rows,
 * then times the product's drop of the partition and today's chunked deletes from the table.
 */
async function postgresResults() {
  const name = `placard_bench_retention_${process.pid}`;
  await adminQuery(`create database ${name}`);
  const store = new Store(connect(postgresUrl(name)));
  try {
    await store.migrate();
    const from = (await store.eventPartitions()).partitionedFrom;
    // The legacy partition goes first, so that the seeded day is the only one to expire below.
    await store.ensureEventPartitions(from, 1);
    await store.dropExpiredEventPartitions(from);
    const partition = `events_p${new Date(from).toISOString().slice(0, 10).replaceAll('-', '')}`;
    await sql`create table flat_events (like events including defaults)`.execute(store.db);
    await sql`alter table flat_events add primary key (id)`.execute(store.db);
    await sql`create index flat_events_occurred on flat_events (occurred_at)`.execute(store.db);
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      console.log(`bench: seeding ${DAY_EVENTS} events into ${partition} and into an unpartitioned table…`);
      await store.ensureEventPartitions(from, 1);
      // No campaigns, partners or keys are seeded: the rows are deleted, never joined.
      await sql`set session_replication_role = replica`.execute(store.db);
      await sql`insert into events ${EVENT_COLUMNS} ${generatedEvents(from)}`.execute(store.db);
      await sql`insert into flat_events ${EVENT_COLUMNS} ${generatedEvents(from)}`.execute(store.db);
      await sql`set session_replication_role = origin`.execute(store.db);
      await sql.raw(`vacuum analyze ${partition}`).execute(store.db);
      await sql`vacuum analyze flat_events`.execute(store.db);
      await sql`checkpoint`.execute(store.db);
      const { rows } = await sql
        .raw(
          `select pg_total_relation_size('${partition}') as total,
        pg_relation_size('${partition}') as heap`,
        )
        .execute(store.db);
      let started = performance.now();
      const dropped = await store.dropExpiredEventPartitions(from + DAY);
      const dropMs = performance.now() - started;
      if (dropped.join() !== partition) throw new Error(`dropped ${dropped.join()}, expected ${partition}`);
      // The next day, empty: what a drop costs whatever the partition holds.
      started = performance.now();
      await store.dropExpiredEventPartitions(from + 2 * DAY);
      const emptyDropMs = performance.now() - started;
      const statements = [];
      let deleted = 0;
      started = performance.now();
      for (;;) {
        const at = performance.now();
        const result = await sql`delete from flat_events where id in (select id from flat_events
          where occurred_at < ${from + DAY} order by occurred_at limit ${RETENTION_CHUNK})`.execute(store.db);
        statements.push(performance.now() - at);
        deleted += Number(result.numAffectedRows);
        if (Number(result.numAffectedRows) < RETENTION_CHUNK) break;
      }
      const chunkedMs = performance.now() - started;
      if (deleted !== DAY_EVENTS)
        throw new Error(`chunked deletes removed ${deleted} rows, expected ${DAY_EVENTS}`);
      const sorted = [...statements].sort((a, b) => a - b);
      const result = {
        dropMs,
        emptyDropMs,
        chunkedMs,
        statements: statements.length,
        statementMedianMs: median(statements),
        statementP99Ms: sorted[Math.floor(sorted.length * 0.99)],
        partitionBytes: Number(rows[0].total),
        heapBytes: Number(rows[0].heap),
      };
      runs.push(result);
      console.log(
        `run ${run + 1}: drop ${dropMs.toFixed(1)} ms (empty day ${emptyDropMs.toFixed(1)} ms), chunked deletes ${(chunkedMs / 1000).toFixed(1)} s ` +
          `(${statements.length} statements), partition ${(result.partitionBytes / 2 ** 20).toFixed(0)} MiB`,
      );
    }
    return {
      events: DAY_EVENTS,
      chunk: RETENTION_CHUNK,
      statements: runs[0].statements,
      ...mediansOf(runs, [
        'dropMs',
        'emptyDropMs',
        'chunkedMs',
        'statementMedianMs',
        'statementP99Ms',
        'partitionBytes',
        'heapBytes',
      ]),
      runs,
    };
  } finally {
    await store.close();
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}

const results = PARTS.includes('sqlite') ? await sqliteResults() : undefined;
const postgres = PARTS.includes('postgres') ? await postgresResults() : undefined;
if (postgres) {
  const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  console.log(`
PostgreSQL, one day of ${postgres.events.toLocaleString('en')} events (medians of ${RUNS} runs):
  retention                                  time        statements
  detach + drop the day's partition          ${`${postgres.dropMs.toFixed(1)} ms`.padEnd(12)}1 transaction
  detach + drop an empty day (for scale)     ${`${postgres.emptyDropMs.toFixed(1)} ms`.padEnd(12)}1 transaction
  chunked deletes of ${postgres.chunk} (unpartitioned)    ${`${(postgres.chunkedMs / 1000).toFixed(1)} s`.padEnd(12)}${postgres.statements} (median ${postgres.statementMedianMs.toFixed(1)} ms, p99 ${postgres.statementP99Ms.toFixed(1)} ms)
  store growth per million events: ${mib((postgres.partitionBytes * 1_000_000) / postgres.events)} (table ${mib((postgres.heapBytes * 1_000_000) / postgres.events)}, the rest its two indexes)`);
}
console.log(
  `results: ${path.relative(process.cwd(), writeResults('retention', { expired: EXPIRED, results, postgres }))}`,
);
