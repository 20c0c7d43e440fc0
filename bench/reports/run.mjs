// bench/reports: how long the management API takes to answer the two reports people wait for, over
// a store holding 10 million per-minute rollup rows (90 days, 1,000 campaigns of 100 advertisers):
// a 90-day daily report of one advertiser, asked with an admin token scoped to that advertiser as
// its dashboard would, and a 24-hour minute report of one of its campaigns. Target (docs/benchmarks.md):
// p95 <= 250 ms on SQLite and on PostgreSQL. Figures are milliseconds on this machine, not ratios to
// the hello-world, whose latency is measured alongside for scale only.
//
// The seeded stores are kept between runs (.bench/reports-store-v<SQLITE_SEED_VERSION>.db and the
// PostgreSQL database placard_bench_reports_v<POSTGRES_SEED_VERSION>) and made only when missing; the
// store's own migrations are applied to them before every run, and timed.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AdminTokens } from '../../apps/server/dist/services/admin-tokens.js';
import { CampaignService } from '../../apps/server/dist/services/campaigns.js';
import { PartnerService } from '../../apps/server/dist/services/partners.js';
import { connect, openSqliteFile } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import {
  adminQuery,
  checkCores,
  CLI,
  median,
  pinToLoadCore,
  postgresUrl,
  ROOT,
  RUNS,
  startPinned,
  tempDir,
  writeResults,
} from '../lib.mjs';
import { benchCampaigns, DEVICES, LOCATIONS, mulberry32 } from '../seed.mjs';

/**
 * Bump when an engine's seeded store changes, so kept stores of the old data are not measured;
 * SQLite's 3: its stores are made with pages of 2,048 bytes.
 */
const SQLITE_SEED_VERSION = 3;
const POSTGRES_SEED_VERSION = 2;
const ROLLUP_ROWS = 10_000_000;
const CAMPAIGNS = 1_000;
const ADVERTISERS = 100;
const PARTNERS = 5;
const DAY = 24 * 60 * 60_000;
const DAYS = 90;
const START = Date.parse('2026-08-27T00:00:00Z');
const MINUTES = (DAYS * DAY) / 60_000;
const TARGET_MS = 250;
/** Requests per report and run, after the warm-up; each measurement also stops after BUDGET_MS. */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const WARM_UP = 20;
/** The engines measured: both unless BENCH_ENGINES names one (`sqlite` or `postgres`). */
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((name) => name.trim());
const unknownEngines = ENGINES.filter((name) => name !== 'sqlite' && name !== 'postgres');
if (unknownEngines.length > 0 || ENGINES.length === 0)
  throw new Error(`BENCH_ENGINES: ${unknownEngines.join(', ')} is not sqlite or postgres`);
const BUDGET_MS = 60_000;

const STORE_DIR = path.join(ROOT, '.bench');
const SQLITE_FILE = path.join(STORE_DIR, `reports-store-v${SQLITE_SEED_VERSION}.db`);
const PG_NAME = `placard_bench_reports_v${POSTGRES_SEED_VERSION}`;

/**
 * Campaign i's share of the rows falls as 1/sqrt(i + 1) (a few busy campaigns, a long quiet tail),
 * and advertiser a holds campaigns a, a + 100, a + 200, …: the first advertiser, whose report is
 * measured, holds the busiest campaign and is the busiest advertiser.
 */
function rowsPerCampaign() {
  const weights = Array.from({ length: CAMPAIGNS }, (_, i) => 1 / Math.sqrt(i + 1));
  const total = weights.reduce((sum, w) => sum + w, 0);
  const rows = weights.map((w) => Math.floor((ROLLUP_ROWS * w) / total));
  rows[0] += ROLLUP_ROWS - rows.reduce((sum, n) => sum + n, 0);
  return rows;
}

/** Cumulative share of a campaign's rows up to each minute: busier by day (UTC) than by night. */
function cumulativeShares() {
  const shares = new Float64Array(MINUTES + 1);
  let sum = 0;
  for (let m = 0; m < MINUTES; m++) {
    sum += 0.3 + Math.sin((Math.PI * (m % 1440)) / 1440) ** 2;
    shares[m + 1] = sum;
  }
  return shares.map((s) => s / sum);
}

/**
 * The rollup rows, minute by minute as a server writes them, in batches of `batchSize` arrays of
 * [minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason, count].
 */
function* rollupBatches(campaignIds, partnerIds, placementsOf, batchSize) {
  const random = mulberry32(2026);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const countries = [...LOCATIONS, ''];
  const devices = [...DEVICES, ''];
  const totals = rowsPerCampaign();
  const shares = cumulativeShares();
  const written = new Float64Array(CAMPAIGNS);
  let batch = [];
  for (let m = 0; m < MINUTES; m++) {
    const minute = START + m * 60_000;
    for (let c = 0; c < CAMPAIGNS; c++) {
      const upTo = Math.round(totals[c] * shares[m + 1]);
      const count = upTo - written[c];
      if (count === 0) continue;
      written[c] = upTo;
      const seen = new Set();
      while (seen.size < count) {
        const kind = random() < 0.1 ? 'click' : 'impression';
        const row = [
          minute,
          campaignIds[c],
          pick(partnerIds),
          pick(placementsOf[c]),
          pick(countries),
          pick(devices),
          kind,
        ];
        const replay = random() < 0.03;
        row.push(
          replay ? 'duplicate' : 'counted',
          replay ? 'idempotent replay' : '',
          1 + Math.floor(random() * (kind === 'click' ? 3 : 30)),
        );
        const key = row.slice(2, 9).join('\0');
        if (seen.has(key)) continue;
        seen.add(key);
        batch.push(row);
        if (batch.length === batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** Migrates a new store and creates its advertisers, campaigns and partners; returns what rows need. */
async function seedAccounts(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    await store.migrate();
    const definitions = benchCampaigns(CAMPAIGNS);
    const advertisers = Array.from({ length: ADVERTISERS }, (_, a) => ({
      name: `Bench advertiser ${a + 1}`,
      campaigns: definitions.filter((_, i) => i % ADVERTISERS === a),
    }));
    const summary = await new CampaignService(store).import({ advertisers }, { approve: true });
    // The summary lists ids in the document's order: advertiser by advertiser.
    const campaignIds = new Array(CAMPAIGNS);
    summary.campaignIds.forEach((id, k) => {
      const a = Math.floor(k / (CAMPAIGNS / ADVERTISERS));
      campaignIds[a + (k % (CAMPAIGNS / ADVERTISERS)) * ADVERTISERS] = id;
    });
    const partnerService = new PartnerService(store);
    const partnerIds = [];
    for (let p = 1; p <= PARTNERS; p++)
      partnerIds.push((await partnerService.createPartner(`Bench partner ${p}`)).id);
    return { campaignIds, partnerIds, placementsOf: definitions.map((d) => d.placements) };
  } finally {
    await store.close();
  }
}

const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(0)} s`;

/**
 * Sums every quarter hour of the seeded rollups into `campaign_rollups`, with the product's own
 * compaction (what a serving instance does as quarter hours close), so the store looks like one
 * that has been running for 90 days.
 */
async function compact(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    while ((await store.compactRollups(START + DAYS * DAY)) !== null);
  } finally {
    await store.close();
  }
}

/** What PostgreSQL's autovacuum does within minutes to tables whose rows no longer change. */
const vacuum = async (databaseUrl) => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
};

/** Seeds the SQLite file under a temporary name and renames it once complete. */
async function seedSqlite() {
  const partial = `${SQLITE_FILE}.partial`;
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(partial + suffix, { force: true });
  fs.mkdirSync(STORE_DIR, { recursive: true });
  const started = performance.now();
  const accounts = await seedAccounts(`sqlite:${partial}`);
  const sqlite = openSqliteFile(partial);
  try {
    sqlite.pragma('synchronous = OFF');
    sqlite.pragma('cache_size = -1000000');
    const insert = sqlite.prepare(
      `insert into event_rollups (minute, campaign_id, partner_id, placement_id, country, device, kind,
        verdict, reason, count) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertAll = sqlite.transaction((rows) => {
      for (const row of rows) insert.run(...row);
    });
    for (const rows of rollupBatches(
      accounts.campaignIds,
      accounts.partnerIds,
      accounts.placementsOf,
      100_000,
    ))
      insertAll(rows);
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
  await compact(`sqlite:${partial}`);
  fs.renameSync(partial, SQLITE_FILE);
  console.log(`bench: seeded ${path.relative(ROOT, SQLITE_FILE)} in ${seconds(started)}`);
}

/** Seeds the PostgreSQL database under a temporary name and renames it once complete. */
async function seedPostgres() {
  const partial = `${PG_NAME}_partial`;
  await adminQuery(`drop database if exists ${partial} with (force)`);
  await adminQuery(`create database ${partial}`);
  const started = performance.now();
  const accounts = await seedAccounts(postgresUrl(partial));
  const client = new pg.Client({ connectionString: postgresUrl(partial) });
  await client.connect();
  try {
    await client.query('set synchronous_commit = off');
    const types = ['bigint', 'bigint', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'bigint'];
    const insert = `insert into event_rollups (minute, campaign_id, partner_id, placement_id, country,
      device, kind, verdict, reason, count) select * from unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
    for (const rows of rollupBatches(
      accounts.campaignIds,
      accounts.partnerIds,
      accounts.placementsOf,
      50_000,
    ))
      await client.query(
        insert,
        types.map((_, column) => rows.map((row) => row[column])),
      );
  } finally {
    await client.end();
  }
  await compact(postgresUrl(partial));
  await vacuum(postgresUrl(partial));
  await adminQuery(`alter database ${partial} rename to ${PG_NAME}`);
  console.log(`bench: seeded PostgreSQL database ${PG_NAME} in ${seconds(started)}`);
}

/**
 * Brings a kept store up to the current migrations (timed: a new index on 10 million rows takes a
 * while), finds the advertiser and campaign to report on, and issues a token scoped to the
 * advertiser. Returns what the requests need.
 */
async function prepare(label, databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    const started = performance.now();
    const { applied } = await store.migrate();
    if (applied.length > 0) {
      console.log(`bench: ${label}: migrated ${applied.join(', ')} in ${seconds(started)}`);
      if (store.engine === 'postgres') await vacuum(databaseUrl);
    }
    const { id: campaign, advertiser_id: advertiser } = await store.db
      .selectFrom('campaigns')
      .select(['id', 'advertiser_id'])
      .where('title', '=', 'Benchmark campaign 1')
      .executeTakeFirstOrThrow();
    const { plaintext } = await new AdminTokens(store).create({
      label: 'bench-reports',
      account: `advertiser:${advertiser}`,
      role: 'reporter',
    });
    return { label, databaseUrl, token: plaintext, advertiser, campaign };
  } finally {
    await store.close();
  }
}

const dateOf = (day) => new Date(START + day * DAY).toISOString().slice(0, 10);

/** The two reports, as an advertiser's people ask for them. */
const reports = (target) => [
  {
    name: 'advertiser, 90 days by day',
    // A date as `to` includes that whole day.
    path: `/admin/v1/reports?from=${dateOf(0)}&to=${dateOf(DAYS - 1)}`,
    rows: DAYS,
  },
  {
    name: 'campaign, 24 hours by minute',
    path: `/admin/v1/reports?granularity=minute&from=${dateOf(DAYS - 1)}T00:00Z&to=${dateOf(DAYS)}T00:00Z&campaign=${target.campaign}`,
  },
];

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET; resolves with its status and body. */
function get(url, headers) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') }),
        );
      })
      .on('error', reject);
  });
}

/**
 * Sends the request one at a time: WARM_UP unmeasured, then REQUESTS measured (or as many as fit
 * in BUDGET_MS). Fails on any answer other than 200, so a figure is never the speed of an error.
 */
async function latencies(url, headers = {}) {
  let last;
  const timed = [];
  for (const measured of [false, true]) {
    const started = performance.now();
    for (let i = 0; i < (measured ? REQUESTS : WARM_UP) && performance.now() - started < BUDGET_MS; i++) {
      const sent = performance.now();
      last = await get(url, headers);
      if (measured) timed.push(performance.now() - sent);
      if (last.status !== 200) throw new Error(`GET ${url} answered ${last.status}: ${last.body}`);
    }
  }
  const sorted = timed.sort((a, b) => a - b);
  const at = (q) => sorted[Math.ceil(q * sorted.length) - 1];
  return {
    timing: { requests: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] },
    last,
  };
}

/** Starts the server on a store, measures both reports, stops it. */
async function measureReports(target, dir) {
  const server = await startPinned([CLI, 'serve', '--json'], {
    PLACARD_DATA_DIR: dir,
    PLACARD_PORT: '0',
    PLACARD_LOG_LEVEL: 'warn',
    PLACARD_DATABASE_URL: target.databaseUrl,
  });
  try {
    const results = {};
    for (const report of reports(target)) {
      const { timing, last } = await latencies(server.url + report.path, {
        authorization: `Bearer ${target.token}`,
      });
      const { data } = JSON.parse(last.body);
      if (data.rows.length === 0 || (report.rows !== undefined && data.rows.length !== report.rows))
        throw new Error(`${report.name}: ${data.rows.length} rows, expected ${report.rows ?? 'some'}`);
      results[report.name] = { ...timing, rows: data.rows.length, impressions: data.totals.impressions };
    }
    return results;
  } finally {
    await server.stop();
  }
}

async function helloLatency() {
  const server = await startPinned([path.join(ROOT, 'bench/hello.mjs')]);
  try {
    return (await latencies(server.url)).timing;
  } finally {
    await server.stop();
  }
}

checkCores();
const pgExists = async () =>
  (await adminQuery('select 1 from pg_database where datname = $1', [PG_NAME])).length > 0;
const targets = [];
if (ENGINES.includes('sqlite')) {
  if (!fs.existsSync(SQLITE_FILE)) {
    console.log(`bench: seeding ${ROLLUP_ROWS.toLocaleString('en')} rollup rows on SQLite (once; kept)…`);
    await seedSqlite();
  }
  targets.push(await prepare('SQLite', `sqlite:${SQLITE_FILE}`));
}
if (ENGINES.includes('postgres')) {
  if (!(await pgExists())) {
    console.log(`bench: seeding ${ROLLUP_ROWS.toLocaleString('en')} rollup rows on PostgreSQL (once; kept)…`);
    await seedPostgres();
  }
  targets.push(await prepare('PostgreSQL', postgresUrl(PG_NAME)));
}
// From here this process is the load generator, on the other core than the server's.
pinToLoadCore();
const dir = tempDir('placard-bench-reports-');
const fmt = (ms) => `${ms.toFixed(1)} ms`;
try {
  const runs = [];
  for (let run = 1; run <= RUNS; run++) {
    const result = { hello: await helloLatency() };
    for (const target of targets) result[target.label] = await measureReports(target, dir);
    runs.push(result);
    const line = targets.flatMap((target) =>
      Object.entries(result[target.label]).map(
        ([name, r]) => `${target.label} ${name}: p50 ${fmt(r.p50)}, p95 ${fmt(r.p95)} (${r.requests})`,
      ),
    );
    console.log(`run ${run}: hello p50 ${fmt(result.hello.p50)}; ${line.join('; ')}`);
  }
  const summary = {
    method: `server on core 0, one request at a time from core 1, ${WARM_UP} warm-up and ${REQUESTS} measured requests per report (at most ${BUDGET_MS / 1000} s), median of ${RUNS} runs`,
    store: { rollupRows: ROLLUP_ROWS, campaigns: CAMPAIGNS, advertisers: ADVERTISERS, days: DAYS },
    hello: {
      p50: median(runs.map((r) => r.hello.p50)),
      p95: median(runs.map((r) => r.hello.p95)),
    },
    results: targets.flatMap((target) =>
      reports(target).map(({ name }) => {
        const of = (key) => median(runs.map((r) => r[target.label][name][key]));
        return { engine: target.label, report: name, p50: of('p50'), p95: of('p95'), max: of('max') };
      }),
    ),
    runs,
  };
  const file = writeResults('reports', summary);
  const rows = summary.results.map(
    (r) =>
      `  ${r.engine.padEnd(11)} ${r.report.padEnd(29)} p50 ${fmt(r.p50).padStart(10)}  p95 ${fmt(r.p95).padStart(10)}  max ${fmt(r.max).padStart(10)}  ` +
      `(target p95 <= ${TARGET_MS} ms: ${r.p95 <= TARGET_MS ? 'met' : 'NOT MET'})`,
  );
  console.log(`
reports over ${ROLLUP_ROWS.toLocaleString('en')} rollup rows (${DAYS} days, ${CAMPAIGNS.toLocaleString('en')} campaigns), ${summary.method}
  hello-world (for scale) p50 ${fmt(summary.hello.p50)}, p95 ${fmt(summary.hello.p95)}
${rows.join('\n')}
results: ${path.relative(ROOT, file)}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  agent.destroy();
}
