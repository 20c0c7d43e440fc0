import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpmCumulativeCost, micros } from '../src/domain/money.js';
import { mulberry32 } from '../src/domain/seeded-random.js';
import { QUARTER_HOUR } from '../src/store/event-ledger.js';
import { readRollups, rollupStatements } from '../src/store/report-queries.js';
import type { TrackedEvent } from '../src/store/store.js';
import { advertiserOf, campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

const DAY_START = Date.parse('2026-06-01T00:00:00Z');
const HOUR = 60 * 60_000;
/** Quarter hours before this are summed into `campaign_rollups`; the rest stay per minute only. */
const COMPACTED_UNTIL = DAY_START + 14 * HOUR;

/** Each priced campaign: its model and price, and what its events should cost in all. */
const PRICES = [
  { title: 'CPM odd', model: 'cpm', amount: 2_500_001 },
  { title: 'CPM small', model: 'cpm', amount: 999 },
  { title: 'CPC', model: 'cpc', amount: 1_234_567 },
] as const;

/**
 * Spend reconciles to the micro on every engine (D18): a day of a few thousand events across
 * campaigns priced per thousand impressions and per click, with replays, invalid events and events
 * of another verdict, some quarter hours summed into `campaign_rollups` and a late batch into one
 * of them. The events' costs, the per-minute rollups, the two rollup tables as reports read them,
 * the report API's rows and totals and the campaigns list's totals (campaign_delivery plus the
 * minutes since the compaction mark) all give the same spend, which is what the prices say.
 */
describe.each(ENGINES)('money reconciliation on %s', (engine) => {
  let t: TestApp;
  const now = DAY_START + 23 * HOUR + 30 * 60_000;
  let ids: number[];
  let advertiser: number;
  /** Billable units per campaign, counted as the events are made. */
  const billed = new Map<number, number>();

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    ids = await t.addCampaigns(
      PRICES.map(({ title }) => campaign({ title })),
      'Reconciled Ads',
    );
    advertiser = await advertiserOf(t.store, ids[0]);
    for (const [i, { model, amount }] of PRICES.entries())
      await setCampaignPrice(t.store, ids[i], { model, amountMicros: amount, since: DAY_START });
    const source = await newPartnerKey(t.store, 'Reconciling partner', 'reconcile');
    const random = mulberry32(18);
    const event = (fields: Partial<TrackedEvent> & { campaignId: number; occurredAt: number }) =>
      trackedEvent({ ...source, priced: true, ...fields });
    let key = 0;
    /** The first event sent with an idempotency key, sent again at the end (a late retry). */
    let first: TrackedEvent | undefined;
    /** A batch of events at random minutes of [from, to), as partners' traffic arrives. */
    async function batch(size: number, from: number, to: number) {
      const events: TrackedEvent[] = [];
      for (let i = 0; i < size; i++) {
        const index = Math.floor(random() * PRICES.length);
        const campaignId = ids[index];
        const occurredAt = from + Math.floor(random() * (to - from));
        const roll = random();
        const kind = random() < 0.3 ? 'click' : 'impression';
        if (roll < 0.1) {
          events.push(event({ campaignId, occurredAt, kind, verdict: 'invalid', reason: 'bot user agent' }));
          continue;
        }
        const idempotencyKey = `k${++key}`;
        const keyed = event({ campaignId, occurredAt, kind, idempotencyKey });
        first ??= keyed;
        events.push(keyed);
        if (kind === (PRICES[index].model === 'cpc' ? 'click' : 'impression'))
          billed.set(campaignId, (billed.get(campaignId) ?? 0) + 1);
        // A replay of it in the same batch: answered, stored once, charged once.
        if (roll > 0.95) events.push(event({ campaignId, occurredAt, kind, idempotencyKey }));
      }
      await t.store.insertEvents(events);
    }
    for (let hour = 0; hour < 23; hour++)
      await batch(130, DAY_START + hour * HOUR, DAY_START + (hour + 1) * HOUR);
    while ((await t.store.compactRollups(COMPACTED_UNTIL)) !== null);
    // Late events for quarter hours already summed, and a replay of one of the first keys.
    await batch(60, DAY_START + 2 * HOUR, DAY_START + 3 * HOUR);
    await t.store.insertEvents([first!]);
  });
  afterAll(async () => t?.close());

  /** What each campaign's billable units cost at its price, worked out from the units alone. */
  const expectedSpend = (i: number): number => {
    const { model, amount } = PRICES[i];
    const units = billed.get(ids[i]) ?? 0;
    return model === 'cpm' ? cpmCumulativeCost(micros(amount), units) : amount * units;
  };

  const sumBy = async (table: 'events' | 'event_rollups_live' | 'campaign_delivery', column: string) => {
    const { rows } = await sql<{ campaign_id: number | string; spend: number | string | null }>`
      select campaign_id, sum(${sql.ref(column)}) as spend from ${sql.table(table)}
      where campaign_id in (${sql.join(ids)}) group by campaign_id`.execute(t.store.db);
    return new Map(rows.map((row) => [Number(row.campaign_id), Number(row.spend ?? 0)]));
  };

  it('has every place that keeps spend agree, to the micro, with what the prices say', async () => {
    const events = [...billed.values()].reduce((a, b) => a + b, 0);
    expect(events).toBeGreaterThan(1_500);
    const expected = new Map(ids.map((id, i) => [id, expectedSpend(i)]));
    for (const spend of expected.values()) expect(spend).toBeGreaterThan(0);
    const total = [...expected.values()].reduce((a, b) => a + b, 0);

    // The raw events and the per-minute rollups.
    expect(await sumBy('events', 'cost_micros')).toEqual(expected);
    expect(await sumBy('event_rollups_live', 'spend_micros')).toEqual(expected);

    // The rollups as a report by hour reads them: campaign_rollups up to the mark, then per minute.
    const query = {
      from: DAY_START,
      to: DAY_START + 24 * HOUR,
      slotMs: QUARTER_HOUR,
      groupBy: ['campaign'] as const,
      filters: { campaign: ids },
    };
    const statements = rollupStatements(t.store.db, { ...query, groupBy: ['campaign'] }, COMPACTED_UNTIL);
    expect(statements.map((s) => s.compile().sql).some((text) => text.includes('campaign_rollups'))).toBe(
      true,
    );
    const slices = await readRollups(t.store.db, { ...query, groupBy: ['campaign'] });
    const fromSlices = new Map<number, number>();
    for (const slice of slices) {
      const id = Number(slice.values.campaign);
      fromSlices.set(id, (fromSlices.get(id) ?? 0) + slice.spend);
    }
    expect(fromSlices).toEqual(expected);

    // The report API, by hour and campaign: its rows and its totals.
    const res = await t.admin(
      'GET',
      `/reports?from=2026-06-01T00:00:00Z&to=2026-06-01T23:00:00Z&granularity=hour&groupBy=campaign&advertiser=${advertiser}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const report = (
      res.json() as {
        data: {
          rows: Array<{ campaign: number; spendMicros: number }>;
          totals: { spendMicros: number; impressions: number; ecpmMicros: number };
        };
      }
    ).data;
    const fromRows = new Map<number, number>();
    for (const row of report.rows)
      fromRows.set(row.campaign, (fromRows.get(row.campaign) ?? 0) + row.spendMicros);
    expect(fromRows).toEqual(expected);
    expect(report.totals.spendMicros).toBe(total);
    expect(report.totals.ecpmMicros).toBe(
      Number((BigInt(total) * 1000n) / BigInt(report.totals.impressions)),
    );

    // The campaigns list: campaign_delivery up to the mark, plus the per-minute rollups after it.
    const summed = await sumBy('campaign_delivery', 'spend_micros');
    expect([...summed.values()].some((spend) => spend > 0)).toBe(true);
    const delivery = await t.store.campaignDelivery(ids.map((id) => ({ id, todayFrom: DAY_START })));
    expect(new Map(ids.map((id) => [id, delivery.get(id)!.spendMicros]))).toEqual(expected);
  });
});
