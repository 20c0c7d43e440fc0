// bench/storage (`npm run bench:storage`): how much a store grows per million tracked events, for
// sizing disks. Stores BENCH_EVENTS events (default 1,000,000) through the store's own batch path
// (raw events, idempotency keys and per-minute rollups, as tracking writes them) on each engine,
// spread evenly over one day across 1,000 campaigns and 20 countries, impressions and clicks 20:1,
// each with a 36-character Idempotency-Key as the SDK sends. Prints the bytes each table holds per
// million events. Raw events are kept for the retention days, idempotency keys for 24 hours, and
// rollups for good; rollups grow with the distinct (minute, campaign, placement, country, device)
// combinations a day holds, not with the events, so their figure is for this mix.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { adminQuery, postgresUrl, tempDir, writeResults } from '../lib.mjs';
import { LOCATIONS, seedCampaigns } from '../seed.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const BATCH = 500;
const DAY = 24 * 60 * 60 * 1000;
const START = Date.parse('2026-11-24T00:00:00Z');
const TABLES = ['events', 'idempotency_keys', 'event_rollups', 'campaign_rollups'];
const DEVICES = ['mobile', 'desktop', 'tablet'];

/** The store's raw tables' sizes in bytes, indexes included (partitions summed on PostgreSQL). */
async function sizes(store, engine) {
  const result = {};
  for (const table of TABLES) {
    const { rows } =
      engine === 'sqlite'
        ? await sql`select sum(pgsize) as bytes from dbstat
            where name = ${table} or name in (select name from sqlite_master where tbl_name = ${table})`.execute(
            store.db,
          )
        : await sql`select sum(pg_total_relation_size(oid)) as bytes from pg_class
            where oid = ${table}::regclass
              or oid in (select inhrelid from pg_inherits where inhparent = ${table}::regclass)`.execute(
            store.db,
          );
    result[table] = Number(rows[0]?.bytes ?? 0);
  }
  return result;
}

async function measure(engine, databaseUrl) {
  const { pairs } = await seedCampaigns(databaseUrl, 1_000);
  const store = new Store(connect(databaseUrl));
  try {
    const [{ id: apiKeyId, partner_id: partnerId }] = await store.db
      .selectFrom('api_keys')
      .select(['id', 'partner_id'])
      .execute();
    if (engine === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    const before = await sizes(store, engine);
    const started = Date.now();
    for (let i = 0; i < EVENTS; i += BATCH) {
      const events = [];
      for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) {
        const [campaignId, placement] = pairs[(j * 7_919) % pairs.length];
        events.push({
          kind: j % 21 === 20 ? 'click' : 'impression',
          campaignId,
          placement,
          country: LOCATIONS[j % LOCATIONS.length],
          device: DEVICES[j % DEVICES.length],
          partnerId: Number(partnerId),
          apiKeyId: Number(apiKeyId),
          occurredAt: START + Math.floor((j * DAY) / EVENTS),
          verdict: 'counted',
          reason: null,
          idempotencyKey: randomUUID(),
          userAddress: null,
          mayHitCap: false,
        });
      }
      await store.insertEvents(events);
      // As a server folds what its batches append (SQLite) every second: here every few batches.
      if ((i / BATCH) % 20 === 19) await store.foldAppended();
    }
    await store.foldAppended();
    const seconds = (Date.now() - started) / 1000;
    if (engine === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    else await sql`vacuum analyze`.execute(store.db);
    const after = await sizes(store, engine);
    const perMillion = Object.fromEntries(
      TABLES.map((table) => [table, ((after[table] - before[table]) * 1_000_000) / EVENTS]),
    );
    return { engine, events: EVENTS, seconds, perMillion };
  } finally {
    await store.close();
  }
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const dir = tempDir('placard-bench-storage-');
const pgName = `placard_bench_storage_${process.pid}`;
await adminQuery(`create database ${pgName}`);
try {
  const results = [
    await measure('sqlite', `sqlite:${path.join(dir, 'placard.db')}`),
    await measure('postgres', postgresUrl(pgName)),
  ];
  const file = writeResults('storage', results);
  console.log(
    `store growth per million events (${EVENTS.toLocaleString('en')} stored over one simulated day)`,
  );
  for (const { engine, seconds, perMillion } of results) {
    const total = Object.values(perMillion).reduce((sum, bytes) => sum + bytes, 0);
    console.log(
      `  ${engine.padEnd(10)} ${TABLES.map((table) => `${table} ${mb(perMillion[table])}`).join(', ')}; total ${mb(total)} (stored in ${seconds.toFixed(0)} s)`,
    );
  }
  console.log(`results: ${path.relative(process.cwd(), file)}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await adminQuery(`drop database if exists ${pgName} with (force)`);
}
