// The tracking load both event benchmarks send (`events.lua`): a seeded store's key and
// (campaign, placement) pairs, and a fresh file of serve tokens for every wrk run.
import fs from 'node:fs';
import path from 'node:path';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { ROOT, serverEnv } from '../lib.mjs';
import { seedCampaigns, writePairs } from '../seed.mjs';
import { BENCH_TOKEN_SECRET, writeTokens } from './tokens.mjs';

export const SCRIPT = path.join(ROOT, 'bench/events/events.lua');

/**
 * Seeds 1,000 campaigns and a key at `databaseUrl` (with `seed`: another checkout's
 * `seedCampaigns`, for a store that checkout's build opens); returns the target with
 * `scriptEnv()`, the environment of `events.lua` for one wrk run.
 */
export async function prepareLoad(label, databaseUrl, dir, seed = seedCampaigns) {
  const { key, keyId, pairs } = await seed(databaseUrl, 1_000);
  let files = 0;
  // Every wrk run sends tokens never sent before (BENCH_TOKENS=false for the load without them).
  const tokens = process.env.BENCH_TOKENS !== 'false';
  const scriptEnv = () =>
    tokens
      ? {
          PLACARD_BENCH_KEY: key,
          PLACARD_BENCH_TOKENS: writeTokens(path.join(dir, `${label}-tokens-${files++ % 2}.txt`), {
            keyId,
            pairs,
          }),
        }
      : {
          PLACARD_BENCH_KEY: key,
          PLACARD_BENCH_PAIRS: writePairs(pairs, path.join(dir, `${label}-pairs.lua`)),
        };
  return { databaseUrl, scriptEnv };
}

/** Stored events by verdict and reason (the rollups, which count every stored event). */
export async function verdictsOf(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    const rows = await store.db
      .selectFrom('event_rollups')
      .select(['verdict', 'reason', (eb) => eb.fn.sum('count').as('events')])
      .groupBy(['verdict', 'reason'])
      .execute();
    return Object.fromEntries(
      rows.map((row) => [`${row.verdict}${row.reason ? `: ${row.reason}` : ''}`, Number(row.events)]),
    );
  } finally {
    await store.close();
  }
}

/**
 * The spend and partner earnings the load was charged, in micros (the rollups' sums), or null for a
 * store without money (an older build's).
 */
export async function moneyOf(databaseUrl) {
  const store = new Store(connect(databaseUrl));
  try {
    const row = await store.db
      .selectFrom('event_rollups')
      .select([
        (eb) => eb.fn.sum('spend_micros').as('spend'),
        (eb) => eb.fn.sum('earnings_micros').as('earnings'),
      ])
      .executeTakeFirst();
    return { spendMicros: Number(row?.spend ?? 0), earningsMicros: Number(row?.earnings ?? 0) };
  } catch {
    return null;
  } finally {
    await store.close();
  }
}

/**
 * A server's own data folder `<dir>/<label>` and SQLite store there, seeded by `seed`: the load and
 * the environment to serve it with (serve tokens' secret included).
 */
export async function sqliteTarget(dir, label, seed) {
  const home = path.join(dir, label);
  fs.mkdirSync(home);
  const load = await prepareLoad(label, `sqlite:${path.join(home, 'placard.db')}`, dir, seed);
  const env = serverEnv(home, {
    PLACARD_DATABASE_URL: load.databaseUrl,
    PLACARD_TOKEN_SECRET: BENCH_TOKEN_SECRET,
  });
  return { load, env };
}
