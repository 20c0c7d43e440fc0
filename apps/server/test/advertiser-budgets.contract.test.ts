import { describe, expect, it } from 'vitest';
import { HELD_UNTIL_RAISED, type AdvertiserBudget } from '../src/domain/advertiser-budgets.js';
import { micros } from '../src/domain/money.js';
import type { PriceModel } from '../src/domain/prices.js';
import { connect } from '../src/store/connect.js';
import { Store, type TrackedEvent } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { eachBlockStore, ENGINES, type TestDatabase } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * Advertiser budgets hold in the commit like campaign budgets (D18), on every engine: an event whose
 * cost would take the advertiser's spend, all its campaigns together, past its total or this billing
 * month's budget is stored `invalid`, `past advertiser budget`, and costs nothing; spend ends within
 * one event's price of the budget however many batches of its campaigns race; its campaigns are then
 * held (until the budget changes, or the next billing month).
 */
describe.each(ENGINES)('advertiser budgets in the event ledger on %s', (engine) => {
  let store: Store;
  let database: TestDatabase;
  eachBlockStore(engine, (opened) => ({ store, database } = opened));
  const at = Date.parse('2026-06-10T12:00:00Z');

  /** An advertiser with `count` campaigns priced alike, a partner key, and events of each campaign. */
  async function advertiser(name: string, model: PriceModel, amount: number, count = 2) {
    const { campaignIds } = await store.importCampaigns([
      { name, campaigns: Array.from({ length: count }, () => campaignInput()) },
    ]);
    for (const id of campaignIds)
      await setCampaignPrice(store, id, { model, amountMicros: amount, since: at - 86_400_000 });
    const id = (await store.findAdvertiser(name))?.id as number;
    const source = await newPartnerKey(store, `${name} partner`, `d-${name}`);
    const event = (campaignId: number, fields: Partial<TrackedEvent> = {}): TrackedEvent =>
      trackedEvent({
        ...source,
        campaignId,
        occurredAt: at,
        priced: true,
        kind: model === 'cpc' ? 'click' : 'impression',
        ...fields,
      });
    return { id, campaignIds, event };
  }

  const setBudget = (
    on: Store,
    id: number,
    {
      totalMicros = null,
      monthlyMicros = null,
    }: { totalMicros?: number | null; monthlyMicros?: number | null },
    now = at,
  ) => {
    const amount = (value: number | null) => (value === null ? null : micros(value));
    const budget: AdvertiserBudget = {
      totalMicros: amount(totalMicros),
      monthlyMicros: amount(monthlyMicros),
    };
    return on.transaction((tx) => tx.setAdvertiserBudget(id, budget, now));
  };

  /** The events of the advertiser's campaigns, in order: reason and cost. */
  async function eventsOf(campaignIds: readonly number[]) {
    const rows = await store.db
      .selectFrom('events')
      .select(['campaign_id', 'verdict', 'reason', 'cost_micros'])
      .where('campaign_id', 'in', campaignIds)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      campaignId: Number(row.campaign_id),
      reason: row.reason,
      cost: Number(row.cost_micros),
    }));
  }

  const heldUntil = async (campaignIds: readonly number[]) =>
    (await store.getCampaigns(campaignIds)).map((campaign) => campaign.budgetHeldUntil);

  it('stores an event past the total budget with its own reason at no cost, holds the campaigns, audited', async () => {
    const { id, campaignIds, event } = await advertiser('adv-total', 'cpc', 3_000);
    const [a, b] = campaignIds as [number, number];
    await setBudget(store, id, { totalMicros: 10_000 });
    const first = await store.insertEvents([event(a), event(b)]);
    expect(first.advertisersHeld).toEqual([]);
    // The third click takes spend to 9,000; the fourth, of either campaign, would pass 10,000.
    const second = await store.insertEvents([event(b), event(a), event(b)]);
    expect(second.pastBudget).toEqual([1, 2]);
    expect(second.advertisersHeld).toEqual([id]);
    expect((await eventsOf(campaignIds)).map((row) => [row.reason, row.cost])).toEqual([
      [null, 3_000],
      [null, 3_000],
      [null, 3_000],
      ['past advertiser budget', 0],
      ['past advertiser budget', 0],
    ]);
    expect(await store.advertiserSpend(id, at)).toMatchObject({ totalMicros: 9_000, monthMicros: 9_000 });
    expect(await heldUntil(campaignIds)).toEqual([HELD_UNTIL_RAISED, HELD_UNTIL_RAISED]);
    expect((await store.listAudit({ objectType: 'advertiser', objectId: String(id) })).at(-1)).toMatchObject({
      actor: 'system',
      action: 'hold',
      reason: 'total budget reached',
    });
    // Held already: a later batch past the budget neither holds again nor audits again.
    const third = await store.insertEvents([event(a)]);
    expect(third.pastBudget).toEqual([0]);
    expect(third.advertisersHeld).toEqual([]);

    // Raising the budget releases the campaigns and charges again, up to the new budget.
    await setBudget(store, id, { totalMicros: 15_000 });
    expect(await heldUntil(campaignIds)).toEqual([null, null]);
    const raised = await store.insertEvents([event(a), event(b), event(a)]);
    expect(raised.pastBudget).toEqual([2]);
    expect(await store.advertiserSpend(id, at)).toMatchObject({ totalMicros: 15_000, monthMicros: 15_000 });
  });

  it('lets the most restrictive budget win: a campaign budget below the advertiser budget is past budget', async () => {
    const { id, campaignIds, event } = await advertiser('adv-restrictive', 'cpc', 2_000);
    const [a, b] = campaignIds as [number, number];
    await setBudget(store, id, { totalMicros: 7_000 });
    await store.db.updateTable('campaigns').set({ budget_total_micros: 3_000 }).where('id', '=', a).execute();
    const outcome = await store.insertEvents([event(a), event(a), event(b), event(b), event(b), event(b)]);
    expect((await eventsOf(campaignIds)).map((row) => [row.campaignId, row.reason, row.cost])).toEqual([
      [a, null, 2_000],
      [a, 'past budget', 0],
      [b, null, 2_000],
      [b, null, 2_000],
      [b, 'past advertiser budget', 0],
      [b, 'past advertiser budget', 0],
    ]);
    expect(outcome.completed).toEqual([a]);
    expect(outcome.advertisersHeld).toEqual([id]);
  });

  it('ends two campaigns racing in concurrent batches within one price of the budget, never past it', async () => {
    const cpm = 7_777_777;
    const { id, campaignIds, event } = await advertiser('adv-race', 'cpm', cpm);
    await setBudget(store, id, { totalMicros: 5_000_000 });
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, batch) =>
        store.insertEvents(Array.from({ length: 25 }, (_, i) => event(campaignIds[(batch + i) % 2]))),
      ),
    );
    const rows = await eventsOf(campaignIds);
    const spend = rows.reduce((sum, row) => sum + row.cost, 0);
    expect(spend).toBeLessThanOrEqual(5_000_000);
    // Each impression of a CPM of 7,777,777 costs 7,777 or 7,778.
    expect(spend).toBeGreaterThan(5_000_000 - 7_778);
    const charged = rows.filter((row) => row.cost > 0).length;
    expect(rows.filter((row) => row.reason === 'past advertiser budget')).toHaveLength(1000 - charged);
    expect(outcomes.reduce((sum, outcome) => sum + outcome.pastBudget.length, 0)).toBe(1000 - charged);
    expect(await store.advertiserSpend(id, at)).toMatchObject({
      totalMicros: spend,
      monthMicros: spend,
      counted: true,
    });
    expect(outcomes.flatMap((outcome) => outcome.advertisersHeld)).toEqual([id]);
  });

  it('resets the monthly budget when the billing month starts in the billing time zone', async () => {
    // A second store on the same database, billing in Tokyo: June ends there at 15:00 UTC on the 30th.
    const tokyo = new Store(connect(database.url), { billingTimeZone: 'Asia/Tokyo' });
    try {
      const { id, campaignIds, event } = await advertiser('adv-monthly', 'cpm', 1_000_000, 1);
      const [a] = campaignIds as [number];
      await setBudget(tokyo, id, { monthlyMicros: 5_500 }, Date.parse('2026-06-30T14:00:00Z'));
      const late = Date.parse('2026-06-30T14:59:00Z');
      const june = await tokyo.insertEvents(Array.from({ length: 7 }, () => event(a, { occurredAt: late })));
      expect(june.pastBudget).toEqual([5, 6]);
      expect(june.advertisersHeld).toEqual([id]);
      const julyStarts = Date.parse('2026-06-30T15:00:00Z');
      expect(await heldUntil(campaignIds)).toEqual([julyStarts]);
      expect(
        (await store.listAudit({ objectType: 'advertiser', objectId: String(id) })).at(-1),
      ).toMatchObject({
        reason: 'monthly budget reached',
        after: { budgetHeldUntil: '2026-06-30T15:00:00.000Z' },
      });
      const july = await tokyo.insertEvents([event(a, { occurredAt: julyStarts + 60_000 })]);
      expect(july.pastBudget).toEqual([]);
      expect(await tokyo.advertiserSpend(id, julyStarts)).toEqual({
        month: '2026-07',
        // August begins at Tokyo's midnight, 15:00 UTC the day before.
        monthEnd: Date.parse('2026-07-31T15:00:00Z'),
        totalMicros: 6_000,
        monthMicros: 1_000,
        counted: true,
      });
    } finally {
      await tokyo.close();
    }
  });

  it('counts the spend before a budget is first set, from the rollups', async () => {
    const { id, campaignIds, event } = await advertiser('adv-late-budget', 'cpc', 4_000);
    const [a, b] = campaignIds as [number, number];
    await store.insertEvents([
      event(a),
      event(b),
      event(a, { occurredAt: Date.parse('2026-05-31T23:00:00Z') }),
    ]);
    await setBudget(store, id, { totalMicros: 14_000, monthlyMicros: 9_000 });
    expect(await store.advertiserSpend(id, at)).toMatchObject({
      totalMicros: 12_000,
      monthMicros: 8_000,
      counted: true,
    });
    const outcome = await store.insertEvents([event(b)]);
    expect(outcome.pastBudget).toEqual([0]);
    // Without budgets, its counters are gone, and no batch writes them.
    await setBudget(store, id, {});
    await store.insertEvents([event(b)]);
    expect(
      await store.db.selectFrom('advertiser_spend').selectAll().where('advertiser_id', '=', id).execute(),
    ).toEqual([]);
    // Its spend is then summed from the rollups.
    expect(await store.advertiserSpend(id, at)).toMatchObject({ totalMicros: 16_000, counted: false });
  });

  it('never holds an honest advertiser without a budget, nor counts its spend', async () => {
    const { id, campaignIds, event } = await advertiser('adv-honest', 'cpm', 9_000_000);
    await Promise.all(
      Array.from({ length: 10 }, (_, batch) =>
        store.insertEvents(Array.from({ length: 50 }, () => event(campaignIds[batch % 2]))),
      ),
    );
    const rows = await eventsOf(campaignIds);
    expect(rows.every((row) => row.reason === null && row.cost > 0)).toBe(true);
    expect(await store.advertiserSpend(id, at)).toMatchObject({ counted: false });
    expect(await heldUntil(campaignIds)).toEqual([null, null]);
  });
});
