// bench/money (`npm run bench:reconcile`): money reconciled to the micro over a large generated load
// (D18). Stores `--events` events (default 10,000,000) through the store's own batch path, as
// tracking writes them, on each engine (`--engine sqlite|postgres`, default both): 200 campaigns,
// seven in ten priced per thousand impressions, two per click, one a house campaign; four partners
// earning different revenue shares; a fifth of the campaigns repriced four times during the load
// and one partner's share changed half way; a quarter of the campaigns with a budget (too large to
// bind) from the start and another quarter from half way, so their spend counters are kept and
// filled from the spend so far; impressions and clicks 20:1 over three days, 4% of them invalid
// and 3% replays of an earlier request. Part of the rollups is compacted on the way.
// Then October's statements are issued (a month the load lies in, closed for the statements' clock),
// every place money is kept is summed and compared, the statements' subtotals included, and every price's and every share's own
// count is checked against the no-loss rule. Exits 1 if any figure differs by a micro.
// `apps/server/test/money-reconcile.e2e.test.ts` runs it at a small size in `npm test`.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { StatementService } from '../../apps/server/dist/services/statements.js';
import { adminQuery, postgresUrl, tempDir, writeResults } from '../lib.mjs';
import { LOCATIONS, mulberry32, seedCampaigns } from '../seed.mjs';

const { values: options } = parseArgs({
  options: { events: { type: 'string', default: '10000000' }, engine: { type: 'string' } },
});
const EVENTS = Number(options.events);
if (!Number.isSafeInteger(EVENTS) || EVENTS < 1000)
  throw new Error('--events must be a whole number from 1000');
const ENGINES = options.engine === undefined ? ['sqlite', 'postgres'] : [options.engine];
const BATCH = 500;
const DAY = 24 * 60 * 60 * 1000;
const START = Date.parse('2026-10-01T00:00:00Z');
const DEVICES = ['mobile', 'desktop', 'tablet'];
/** Revenue shares of the four partners, in basis points; the second changes half way. */
const SHARES = [7_000, 3_333, 5_555, 0];

/** A campaign's price through the store's own update, as a price change writes it. */
const setPrice = (store, campaignId, model, amount, since) =>
  store.updateCampaign(campaignId, { price: { model, amountMicros: amount } }, since, 'reconcile');

/** A budget no load here reaches: its spend counters are kept, and must agree with the events. */
const LARGE = 1_000_000_000_000_000;
const setBudget = (store, campaignId, at) =>
  store.updateCampaign(campaignId, { budget: { totalMicros: LARGE, dailyMicros: LARGE } }, at, 'reconcile');

const setShare = (store, partnerId, basisPoints, from) =>
  store.addRevenueShare({ partnerId, effectiveFrom: from, basisPoints, actor: 'reconcile' }, from);

/** Stores the load; returns how long storing took and the campaigns given a budget. */
async function storeLoad(store, pairs) {
  const random = mulberry32(11);
  const budgeted = new Set();
  const giveBudgets = async (quarter, at) => {
    for (const [index, [campaignId]] of pairs.entries())
      if (index % 4 === quarter && !budgeted.has(campaignId)) {
        await setBudget(store, campaignId, at);
        budgeted.add(campaignId);
      }
  };
  await giveBudgets(0, START);
  const sources = [];
  const [benchKey] = await store.db.selectFrom('api_keys').select(['id', 'partner_id']).execute();
  sources.push({ partnerId: Number(benchKey.partner_id), apiKeyId: Number(benchKey.id) });
  // The seed's partner earns 70% from the start; three more partners with their own shares.
  for (let i = 1; i < SHARES.length; i++) {
    const partner = await store.createPartner(`Reconciled partner ${i}`);
    const key = await store.createApiKey({
      partnerId: partner.id,
      label: null,
      displayPrefix: 'r',
      digest: `reconcile-${i}`,
    });
    sources.push({ partnerId: partner.id, apiKeyId: key.id });
    if (SHARES[i] > 0) await setShare(store, partner.id, SHARES[i], 0);
  }
  const priced = new Set(
    (
      await store.db.selectFrom('campaigns').select('id').where('price_model', 'in', ['cpm', 'cpc']).execute()
    ).map((row) => Number(row.id)),
  );
  const recent = [];
  const repriceEvery = Math.ceil(EVENTS / 5 / BATCH) * BATCH;
  let round = 0;
  const started = Date.now();
  for (let i = 0; i < EVENTS; i += BATCH) {
    const at = START + Math.floor((i * 3 * DAY) / EVENTS);
    // Four times during the load, a fifth of the campaigns get a new price; half way, a new share.
    if (i > 0 && i % repriceEvery === 0) {
      round++;
      for (const [campaignId] of pairs.filter((_, index) => index % 5 === round % 5)) {
        const cpm = random() < 0.7;
        const amount = cpm
          ? 1_000_003 + Math.floor(random() * 5_000_000)
          : 150_001 + Math.floor(random() * 600_000);
        await setPrice(store, campaignId, cpm ? 'cpm' : 'cpc', amount, at);
        priced.add(campaignId);
      }
    }
    if (i === Math.floor(EVENTS / BATCH / 2) * BATCH) {
      await setShare(store, sources[1].partnerId, 4_999, at);
      await giveBudgets(2, at);
    }
    if (i === Math.floor((EVENTS * 2) / 3 / BATCH) * BATCH) await store.compactRollups(START + DAY);
    const events = [];
    for (let j = i; j < Math.min(EVENTS, i + BATCH); j++) {
      const roll = random();
      if (roll < 0.03 && recent.length > 0) {
        // A replay: the same request again with its Idempotency-Key, later.
        events.push({ ...recent[Math.floor(random() * recent.length)], occurredAt: at });
        continue;
      }
      const [campaignId, placement] = pairs[(j * 7_919) % pairs.length];
      const event = {
        kind: j % 21 === 20 ? 'click' : 'impression',
        campaignId,
        placement,
        country: LOCATIONS[j % LOCATIONS.length],
        device: DEVICES[j % DEVICES.length],
        ...sources[j % sources.length],
        occurredAt: at + (j % BATCH),
        verdict: roll < 0.07 ? 'invalid' : 'counted',
        reason: roll < 0.07 ? 'known bot' : null,
        idempotencyKey: randomUUID(),
        userAddress: null,
        mayHitCap: false,
        priced: priced.has(campaignId),
      };
      events.push(event);
      if (j % 50 === 0) recent.push(event);
    }
    if (recent.length > 200) recent.splice(0, recent.length - 200);
    await store.insertEvents(events);
    // Folded now and then, as the server folds every second: between batches, repricings and
    // share changes, so CPM runs and earnings go on exactly from rows folded and not.
    if ((i / BATCH) % 7 === 3) await store.foldAppended();
  }
  await store.compactRollups(START + 2 * DAY);
  return { seconds: (Date.now() - started) / 1000, budgeted: [...budgeted] };
}

/**
 * October's statements, issued as the operator issues them, on a clock in November (the load lies in
 * October's first days): the advertisers' subtotals and the partners' summed.
 */
async function statementFigures(store) {
  const statements = new StatementService(store, undefined, () => START + 40 * DAY, 'UTC', 'USD');
  const issued = await statements.issue('2026-10');
  const sum = (kind) =>
    issued.filter((statement) => statement.kind === kind).reduce((total, s) => total + s.subtotalMicros, 0);
  return { statementSpend: sum('advertiser'), statementEarnings: sum('partner') };
}

/** Sums of money in every place it is kept, and what differs from what. */
async function reconcile(store, budgeted) {
  const one = async (query) => Number((await query.execute(store.db)).rows[0]?.n ?? 0);
  const mark = await one(
    sql`select cast(value as bigint) as n from meta where key = 'rollups_compacted_before'`,
  );
  const figures = {
    eventSpend: await one(sql`select coalesce(sum(cost_micros), 0) as n from events`),
    rollupSpend: await one(sql`select coalesce(sum(spend_micros), 0) as n from event_rollups_live`),
    // What a report of weeks reads: the quarter hours before the mark summed, the minutes after.
    reportSpend:
      (await one(
        sql`select coalesce(sum(spend_micros), 0) as n from campaign_rollups where slot < ${mark}`,
      )) +
      (await one(
        sql`select coalesce(sum(spend_micros), 0) as n from event_rollups_live where minute >= ${mark}`,
      )),
    priceSpend: await one(sql`select coalesce(sum(spend_micros), 0) as n from campaign_prices_live`),
    // Only campaigns with a budget have spend counters: against their events' costs.
    budgetedSpend: await one(
      sql`select coalesce(sum(cost_micros), 0) as n from events where campaign_id in (${sql.join(budgeted)})`,
    ),
    counterSpend: await one(
      sql`select coalesce(sum(spend_micros), 0) as n from campaign_counters where day = 'total'`,
    ),
    deliverySpend: await one(sql`select coalesce(sum(spend_micros), 0) as n from campaign_delivery`),
    compactedSpend: await one(
      sql`select coalesce(sum(spend_micros), 0) as n from campaign_rollups where verdict = 'counted'`,
    ),
    unbilledCost: await one(
      sql`select coalesce(sum(cost_micros), 0) as n from events where verdict <> 'counted'`,
    ),
    charged: await one(sql`select count(*) as n from events where cost_micros > 0`),
    billed: await one(sql`select coalesce(sum(billed), 0) as n from campaign_prices_live`),
    eventEarnings: await one(sql`select coalesce(sum(earnings_micros), 0) as n from events`),
    rollupEarnings: await one(sql`select coalesce(sum(earnings_micros), 0) as n from event_rollups_live`),
    counterEarnings: await one(sql`select coalesce(sum(earnings_micros), 0) as n from partner_earnings_live`),
    ...(await statementFigures(store)),
  };
  const differences = [];
  const same = (a, b) => {
    if (figures[a] !== figures[b]) differences.push(`${a} ${figures[a]} ≠ ${b} ${figures[b]}`);
  };
  for (const place of ['rollupSpend', 'reportSpend', 'priceSpend']) same('eventSpend', place);
  same('budgetedSpend', 'counterSpend');
  if (figures.budgetedSpend === 0)
    differences.push('the campaigns with a budget spent nothing: nothing checked');
  same('deliverySpend', 'compactedSpend');
  same('charged', 'billed');
  same('eventEarnings', 'rollupEarnings');
  same('eventEarnings', 'counterEarnings');
  same('eventSpend', 'statementSpend');
  same('eventEarnings', 'statementEarnings');
  if (figures.unbilledCost !== 0) differences.push(`events not counted cost ${figures.unbilledCost} micros`);
  // What batches appended (SQLite) summed into the price and earnings rows, as the server's fold
  // does every second: the same totals there, and each row whole for the no-loss rules below.
  await store.foldAppended();
  figures.foldedPriceSpend = await one(sql`select coalesce(sum(spend_micros), 0) as n from campaign_prices`);
  figures.foldedBilled = await one(sql`select coalesce(sum(billed), 0) as n from campaign_prices`);
  figures.foldedEarnings = await one(
    sql`select coalesce(sum(earnings_micros), 0) as n from partner_earnings`,
  );
  same('priceSpend', 'foldedPriceSpend');
  same('billed', 'foldedBilled');
  same('counterEarnings', 'foldedEarnings');
  // The no-loss rules: each price's spend from its own count, each share's earnings from its spend.
  const prices = await store.db
    .selectFrom('campaign_prices')
    .selectAll()
    .where('model', 'in', ['cpm', 'cpc'])
    .execute();
  for (const price of prices) {
    const billed = BigInt(price.billed);
    const amount = BigInt(price.amount_micros);
    const expected = price.model === 'cpm' ? (billed * amount) / 1000n : billed * amount;
    if (BigInt(price.spend_micros) !== expected)
      differences.push(
        `price ${price.id} (${price.model} ${price.amount_micros}): ${price.billed} units cost ${price.spend_micros}, not ${expected}`,
      );
  }
  const earnings = await store.db
    .selectFrom('partner_earnings')
    .innerJoin('partner_revenue_shares', 'partner_revenue_shares.id', 'partner_earnings.share_id')
    .select([
      'partner_earnings.spend_micros',
      'partner_earnings.earnings_micros',
      'partner_revenue_shares.basis_points',
    ])
    .execute();
  for (const row of earnings) {
    const expected = (BigInt(row.spend_micros) * BigInt(row.basis_points)) / 10_000n;
    if (BigInt(row.earnings_micros) !== expected)
      differences.push(
        `${row.basis_points} bps of ${row.spend_micros} earned ${row.earnings_micros}, not ${expected}`,
      );
  }
  return { figures, prices: prices.length, shares: earnings.length, differences };
}

async function run(engine, databaseUrl) {
  const { pairs } = await seedCampaigns(databaseUrl, 200);
  const store = new Store(connect(databaseUrl));
  try {
    const { seconds, budgeted } = await storeLoad(store, pairs);
    return { engine, events: EVENTS, seconds, ...(await reconcile(store, budgeted)) };
  } finally {
    await store.close();
  }
}

const dir = tempDir('placard-bench-reconcile-');
const pgName = `placard_bench_reconcile_${process.pid}`;
const results = [];
try {
  for (const engine of ENGINES) {
    if (engine === 'postgres') await adminQuery(`create database ${pgName}`);
    results.push(
      await run(engine, engine === 'sqlite' ? `sqlite:${path.join(dir, 'placard.db')}` : postgresUrl(pgName)),
    );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  if (ENGINES.includes('postgres')) await adminQuery(`drop database if exists ${pgName} with (force)`);
}
const file = writeResults('reconcile', results);
for (const { engine, seconds, figures, prices, shares, differences } of results) {
  console.log(
    `reconcile ${engine}: ${EVENTS.toLocaleString('en')} events stored in ${seconds.toFixed(0)} s; spend ${figures.eventSpend} micros ` +
      `(${figures.charged} charged events, ${prices} prices), earnings ${figures.eventEarnings} micros (${shares} partner shares in use); ` +
      (differences.length === 0
        ? 'every place agrees: 0 micros apart'
        : `DIFFERENCES: ${differences.join('; ')}`),
  );
}
console.log(`results: ${path.relative(process.cwd(), file)}`);
if (results.some((result) => result.differences.length > 0)) process.exit(1);
