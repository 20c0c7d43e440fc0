// bench/import/run.mjs (`node bench/import/run.mjs [count]`, default 100,000): how long an import
// of that many campaigns takes, as `placard campaigns import --approve` runs it (one call of the
// campaign service: validation, then one transaction with every campaign and its audit entry), on
// a fresh SQLite file and a fresh PostgreSQL database. BENCH_IMPORT=sqlite or =postgres runs one
// part only. The campaigns are the serving benchmarks' (`bench/seed.mjs`). Results:
// docs/benchmarks.md ("Importing campaigns").
import fs from 'node:fs';
import path from 'node:path';
import { CampaignService } from '../../apps/server/dist/services/campaigns.js';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { adminQuery, postgresUrl, tempDir } from '../lib.mjs';
import { benchCampaigns } from '../seed.mjs';

const COUNT = Number(process.argv[2] ?? 100_000);
const PARTS = (process.env.BENCH_IMPORT ?? 'sqlite,postgres').split(',');
const campaigns = benchCampaigns(COUNT);

async function timeImport(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    await store.migrate();
    const started = process.hrtime.bigint();
    const summary = await new CampaignService(store).import(
      { advertisers: [{ name: 'Imported advertiser', campaigns }] },
      { approve: true },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (summary.campaignsCreated !== COUNT)
      throw new Error(`imported ${summary.campaignsCreated} of ${COUNT}`);
    return seconds;
  } finally {
    await store.close();
  }
}

const report = (engine, seconds) =>
  console.log(
    `${engine.padEnd(10)} ${COUNT.toLocaleString('en')} campaigns in ${seconds.toFixed(1)} s (${Math.round(COUNT / seconds).toLocaleString('en')} a second)`,
  );

console.log(`import of ${COUNT.toLocaleString('en')} campaigns, started ${new Date().toISOString()}`);
if (PARTS.includes('sqlite')) {
  const dir = tempDir('placard-import-');
  try {
    report('SQLite', await timeImport(`sqlite:${path.join(dir, 'placard.db')}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
if (PARTS.includes('postgres')) {
  const name = `placard_bench_import_${process.pid}`;
  await adminQuery(`create database ${name}`);
  try {
    report('PostgreSQL', await timeImport(postgresUrl(name)));
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}
