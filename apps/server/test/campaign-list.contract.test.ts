import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, TrackedEvent } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';

const at = (iso: string) => Date.parse(iso);

/** The campaigns list's reads (search, sorts, delivery today and in total), on each engine. */
describe.each(ENGINES)('campaign list on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let event: (fields: Partial<TrackedEvent> & { campaignId: number }) => TrackedEvent;

  beforeAll(async () => {
    database = await createDatabase(engine);
    store = await database.open();
    const source = await newPartnerKey(store, 'List partner', 'l');
    event = (fields) =>
      trackedEvent({ ...source, occurredAt: at('2026-06-02T10:00:00Z'), priced: true, ...fields });
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  async function advertiserWith(name: string, titles: string[]): Promise<number[]> {
    const { campaignIds } = await store.importCampaigns(
      [{ name, campaigns: titles.map((title) => campaignInput({ title })) }],
      at('2026-06-01T00:00:00Z'),
    );
    return campaignIds;
  }

  /** Sums every closed quarter hour before `until`, as the compaction job does. */
  async function compactUntil(until: number): Promise<void> {
    while ((await store.compactRollups(until)) !== null);
  }

  it('counts delivery today (from the campaign’s local midnight) and in total, and spend in total, before and after compaction', async () => {
    const [utc, paris, quiet] = await advertiserWith('Delivery', ['UTC one', 'Paris one', 'Quiet one']);
    const day = (iso: string) => at(iso);
    const since = day('2026-06-01T00:00:00Z');
    // Each counted click of the first costs 1,500,001 micros; a thousand impressions of the second 3 units.
    await setCampaignPrice(store, utc, { model: 'cpc', amountMicros: 1_500_001, since });
    await setCampaignPrice(store, paris, { model: 'cpm', amountMicros: 3_000_000, since });
    await store.insertEvents([
      // The day before, in UTC and in Paris.
      event({ campaignId: utc, occurredAt: day('2026-06-01T09:00:00Z') }),
      event({ campaignId: utc, occurredAt: day('2026-06-01T09:01:00Z'), kind: 'click' }),
      // 22:30 UTC on June 1st is 00:30 on June 2nd in Paris: today there, yesterday in UTC.
      event({ campaignId: paris, occurredAt: day('2026-06-01T22:30:00Z') }),
      event({ campaignId: utc, occurredAt: day('2026-06-01T22:30:00Z') }),
      // Today.
      event({ campaignId: utc, occurredAt: day('2026-06-02T08:00:00Z') }),
      event({ campaignId: utc, occurredAt: day('2026-06-02T09:59:00Z'), kind: 'click' }),
      event({ campaignId: paris, occurredAt: day('2026-06-02T09:59:00Z') }),
      // Not counted: never delivery.
      event({ campaignId: utc, occurredAt: day('2026-06-02T09:00:00Z'), verdict: 'invalid', reason: 'x' }),
    ]);
    const asked = [
      { id: utc, todayFrom: day('2026-06-02T00:00:00Z') },
      { id: paris, todayFrom: day('2026-06-01T22:00:00Z') }, // midnight in Paris (UTC+2)
      { id: quiet, todayFrom: day('2026-06-02T00:00:00Z') },
    ];
    const expected = new Map([
      [
        utc,
        {
          today: { impressions: 1, clicks: 1 },
          total: { impressions: 3, clicks: 2 },
          spendMicros: 3_000_002,
        },
      ],
      [
        paris,
        { today: { impressions: 2, clicks: 0 }, total: { impressions: 2, clicks: 0 }, spendMicros: 6_000 },
      ],
      [quiet, { today: { impressions: 0, clicks: 0 }, total: { impressions: 0, clicks: 0 }, spendMicros: 0 }],
    ]);
    expect(await store.campaignDelivery(asked)).toEqual(expected);

    // Compacted up to 08:00 UTC today, then past every event: the same figures each time.
    await compactUntil(day('2026-06-02T08:00:00Z'));
    expect(await store.campaignDelivery(asked)).toEqual(expected);
    await compactUntil(day('2026-06-02T10:00:00Z'));
    expect(await store.campaignDelivery(asked)).toEqual(expected);

    // A late batch adds to a quarter hour already compacted (a new row and an existing one).
    await store.insertEvents([
      event({ campaignId: utc, occurredAt: day('2026-06-02T08:05:00Z') }),
      event({ campaignId: utc, occurredAt: day('2026-06-02T08:06:00Z'), kind: 'click' }),
      event({ campaignId: quiet, occurredAt: day('2026-06-01T12:00:00Z'), kind: 'click' }),
    ]);
    const late = await store.campaignDelivery(asked);
    expect(late.get(utc)).toEqual({
      today: { impressions: 2, clicks: 2 },
      total: { impressions: 4, clicks: 3 },
      spendMicros: 4_500_003,
    });
    expect(late.get(quiet)).toEqual({
      today: { impressions: 0, clicks: 0 },
      total: { impressions: 0, clicks: 1 },
      spendMicros: 0,
    });
  });

  it('searches titles in any case, with wildcards taken literally, and by id', async () => {
    const ids = await advertiserWith('Searchers', [
      'Summer Sale',
      'summer nights',
      'Winter 100% off',
      'Winter_1',
    ]);
    const advertiserId = (await store.getCampaign(ids[0]))!.advertiserId;
    const titles = async (search: string) =>
      (await store.campaignPage({ advertiserId, search }, { offset: 0, size: 50 })).rows.map((c) => c.title);
    expect(await titles('SUMMER')).toEqual(['summer nights', 'Summer Sale']);
    expect(await titles('100%')).toEqual(['Winter 100% off']);
    expect(await titles('r_')).toEqual(['Winter_1']);
    expect(await titles(`#${ids[2]}`)).toEqual(['Winter 100% off']);
    const counted = await store.campaignPage({ advertiserId, search: 'winter' }, { offset: 0, size: 1 });
    expect(counted.total).toBe(2);
    expect(counted.rows).toHaveLength(1);
  });

  it('sorts by name, by delivery up to the last summed quarter hour, and by age, ties by id', async () => {
    const ids = await advertiserWith('Sorters', ['beta', 'alpha', 'gamma', 'delta']);
    const [beta, alpha, gamma, delta] = ids as [number, number, number, number];
    const advertiserId = (await store.getCampaign(beta))!.advertiserId;
    await store.insertEvents([
      event({ campaignId: gamma, occurredAt: at('2026-06-03T01:00:00Z') }),
      event({ campaignId: gamma, occurredAt: at('2026-06-03T01:00:00Z') }),
      event({ campaignId: alpha, occurredAt: at('2026-06-03T01:00:00Z') }),
      event({ campaignId: delta, occurredAt: at('2026-06-03T01:00:00Z'), kind: 'click' }),
    ]);
    await compactUntil(at('2026-06-03T02:00:00Z'));
    const order = async (by: 'name' | 'impressions' | 'clicks' | 'newest', descending: boolean, offset = 0) =>
      (await store.campaignPage({ advertiserId }, { offset, size: 50 }, { by, descending })).rows.map(
        (c) => c.title,
      );
    expect(await order('name', false)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(await order('name', true)).toEqual(['gamma', 'delta', 'beta', 'alpha']);
    expect(await order('impressions', true)).toEqual(['gamma', 'alpha', 'delta', 'beta']);
    expect(await order('impressions', false)).toEqual(['beta', 'delta', 'alpha', 'gamma']);
    expect(await order('clicks', true)).toEqual(['delta', 'gamma', 'alpha', 'beta']);
    expect(await order('newest', false)).toEqual(['beta', 'alpha', 'gamma', 'delta']);
    expect(await order('newest', true)).toEqual(['delta', 'gamma', 'alpha', 'beta']);
    // Pages of a sorted list follow each other.
    const page = await store.campaignPage(
      { advertiserId },
      { offset: 2, size: 2 },
      { by: 'name', descending: false },
    );
    expect(page.rows.map((c) => c.title)).toEqual(['delta', 'gamma']);
    expect(page.total).toBe(4);
    // A status filter applies to the sorted list and its count.
    await store.updateCampaign(gamma, { status: 'paused' }, at('2026-06-03T03:00:00Z'));
    const running = await store.campaignPage(
      { advertiserId, status: 'running' },
      { offset: 0, size: 50 },
      { by: 'impressions', descending: true },
    );
    expect(running.rows.map((c) => c.title)).toEqual(['alpha', 'delta', 'beta']);
    expect(running.total).toBe(3);
  });
});
