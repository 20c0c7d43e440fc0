import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { cpmCumulativeCost, micros } from '../src/domain/money.js';
import type { PriceModel } from '../src/domain/prices.js';
import type { Store, TrackedEvent } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { eachBlockStore, ENGINES, type TestDatabase } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * Each billable event's cost is fixed in its batch's commit from the price then in force (D18), on
 * every engine: the n-th impression at a CPM costs F(n) − F(n − 1), replays and events that are not
 * counted cost nothing, and the raw events, the rollups, the price's own count and (for a campaign
 * with a budget, the only kind that has them) the campaign's spend counters agree to the micro.
 */
describe.each(ENGINES)('money in the event ledger on %s', (engine) => {
  let store: Store;
  let database: TestDatabase;
  eachBlockStore(engine, (opened) => ({ store, database } = opened));
  const at = Date.parse('2026-06-01T12:00:00Z');

  const setPrice = (campaignId: number, model: PriceModel | null, amount: number | null) =>
    setCampaignPrice(store, campaignId, { model, amountMicros: amount, since: at });

  async function pricedCampaign(name: string, model: PriceModel, amount: number) {
    const { campaignIds } = await store.importCampaigns([{ name, campaigns: [campaignInput()] }]);
    const id = campaignIds[0];
    await setPrice(id, model, amount);
    const source = await newPartnerKey(store, `${name} partner`, `d-${name}`);
    const event = (fields: Partial<TrackedEvent> = {}): TrackedEvent =>
      trackedEvent({ ...source, campaignId: id, occurredAt: at, priced: true, ...fields });
    return { id, event, partnerId: source.partnerId };
  }

  /** What the store holds of a campaign's money, read back from each place it is kept. */
  async function moneyOf(campaignId: number) {
    const events = await store.db
      .selectFrom('events')
      .select(['kind', 'verdict', 'cost_micros', 'event_at'])
      .where('campaign_id', '=', campaignId)
      .orderBy('id')
      .execute();
    const rollups = await sql<{ spend: string | number | null }>`
      select sum(spend_micros) as spend from event_rollups_live where campaign_id = ${campaignId}`.execute(
      store.db,
    );
    const prices = await store.db
      .selectFrom('campaign_prices_live')
      .select(['billed', 'spend_micros'])
      .where('campaign_id', '=', campaignId)
      .orderBy('id')
      .execute();
    const total = await store.db
      .selectFrom('campaign_counters')
      .select('spend_micros')
      .where('campaign_id', '=', campaignId)
      .where('day', '=', 'total')
      .executeTakeFirst();
    const costs = events.map((row) => Number(row.cost_micros));
    return {
      events,
      costs,
      eventSpend: costs.reduce((sum, cost) => sum + cost, 0),
      rollupSpend: Number(rollups.rows[0]?.spend ?? 0),
      prices: prices.map((row) => ({ billed: Number(row.billed), spend: Number(row.spend_micros) })),
      counterSpend: Number(total?.spend_micros ?? 0),
    };
  }

  it('charges every 1,000 impressions exactly the CPM, however they are batched, and nothing else', async () => {
    const cpm = 2_500_001;
    const { id, event } = await pricedCampaign('cpm-batches', 'cpm', cpm);
    let n = 0;
    const sizes = [1, 7, 333, 2, 659, 998, 1, 344];
    for (const [batch, size] of sizes.entries()) {
      const events = Array.from({ length: size }, (_, i) => event({ idempotencyKey: `k-${batch}-${i}` }));
      // Each batch also carries a replay of its first event, a click, and an invalid impression.
      events.push(event({ idempotencyKey: `k-${batch}-0` }));
      events.push(event({ kind: 'click' }));
      events.push(event({ verdict: 'invalid', reason: 'bot user agent' }));
      const outcome = await store.insertEvents(events);
      expect(outcome.replayed).toEqual([size]);
      n += size;
    }
    const money = await moneyOf(id);
    const expected = cpmCumulativeCost(micros(cpm), n);
    expect(n).toBe(2345);
    expect(money.eventSpend).toBe(expected);
    expect(money.rollupSpend).toBe(expected);
    expect(money.prices).toEqual([{ billed: n, spend: expected }]);
    // No budget, so no spend counters: its budgets are all they are for.
    expect(money.counterSpend).toBe(0);
    const billed = money.events.filter((row) => row.kind === 'impression' && row.verdict === 'counted');
    expect(billed.map((row) => Number(row.cost_micros)).every((cost) => cost === 2500 || cost === 2501)).toBe(
      true,
    );
    const unbilled = money.events.filter((row) => row.kind !== 'impression' || row.verdict !== 'counted');
    expect(unbilled).toHaveLength(3 * sizes.length);
    expect(unbilled.every((row) => Number(row.cost_micros) === 0)).toBe(true);
  });

  it('applies a new price to later events only, and counts each price from its own start', async () => {
    const { id, event } = await pricedCampaign('price-change', 'cpm', 1_999);
    await store.insertEvents([event(), event(), event()]);
    const before = await moneyOf(id);
    await setPrice(id, 'cpc', 300_000);
    await store.insertEvents([event(), event({ kind: 'click' }), event({ kind: 'click' })]);
    await setPrice(id, 'cpm', 1_999);
    await store.insertEvents([event()]);
    const after = await moneyOf(id);
    expect(after.costs.slice(0, 3)).toEqual(before.costs);
    // F(1..3) at 1,999: 1, 2, 2 (floor(1.999), floor(3.998), floor(5.997)); the next CPM starts at n = 1.
    expect(after.costs).toEqual([1, 2, 2, 0, 300_000, 300_000, 1]);
    expect(after.prices).toEqual([
      { billed: 3, spend: 5 },
      { billed: 2, spend: 600_000 },
      { billed: 1, spend: 1 },
    ]);
    expect(after.rollupSpend).toBe(600_006);
    expect(after.counterSpend).toBe(0);
  });

  it('starts a budget set after the campaign has spent from what it spent: in total, and today in its time zone', async () => {
    const { id, event } = await pricedCampaign('budget-later', 'cpc', 3_000);
    // Days of their own, after every other test's (the compaction test sums the first quarter hour).
    const day = 24 * 3_600_000;
    const yesterday = at + 10 * day;
    const today = at + 11 * day;
    const click = (occurredAt = today) => event({ kind: 'click', occurredAt });
    // 6,000 spent the day before and 6,000 today, without a budget.
    await store.insertEvents([click(yesterday), click(yesterday)]);
    await store.insertEvents([click(), click()]);
    expect((await moneyOf(id)).counterSpend).toBe(0);
    await store.updateCampaign(
      id,
      { budget: { totalMicros: micros(21_000), dailyMicros: micros(10_000) } },
      today,
      'test',
    );
    expect((await moneyOf(id)).counterSpend).toBe(12_000);
    // Today's third click takes the day to 9,000; a fourth would pass 10,000.
    const more = await store.insertEvents([click(), click()]);
    expect(more.pastBudget).toEqual([1]);
    // Tomorrow, the total budget holds: 15,000 + 3,000 is 18,000; another would be 21,000, then 24,000.
    const tomorrow = today + day;
    const next = await store.insertEvents([click(tomorrow), click(tomorrow), click(tomorrow)]);
    expect(next.pastBudget).toEqual([2]);
    const money = await moneyOf(id);
    expect(money.eventSpend).toBe(21_000);
    expect(money.counterSpend).toBe(21_000);
    expect(money.prices).toEqual([{ billed: 7, spend: 21_000 }]);
  });

  it('charges concurrent batches as one sequence: 40 batches of 25 cost exactly the CPM', async () => {
    const cpm = 7_777_777;
    const { id, event } = await pricedCampaign('concurrent', 'cpm', cpm);
    await Promise.all(
      Array.from({ length: 40 }, () => store.insertEvents(Array.from({ length: 25 }, () => event()))),
    );
    const money = await moneyOf(id);
    expect(money.eventSpend).toBe(cpm);
    expect(money.rollupSpend).toBe(cpm);
    expect(money.prices).toEqual([{ billed: 1000, spend: cpm }]);
  });

  it('charges an event whose campaign the serving index did not know was priced (a price set a moment ago)', async () => {
    const { id, event } = await pricedCampaign('unmarked', 'cpc', 410_000);
    // Marked as charging nothing, as an instance that has not polled since the price was set marks it.
    const outcome = await store.insertEvents([
      event({ kind: 'click', priced: false }),
      event({ kind: 'click', priced: false, verdict: 'invalid', reason: 'bot user agent' }),
    ]);
    expect(outcome.stored).toEqual(
      new Map([
        ['click:counted', 1],
        ['click:invalid', 1],
      ]),
    );
    const money = await moneyOf(id);
    expect(money.costs).toEqual([410_000, 0]);
    expect(money.prices).toEqual([{ billed: 1, spend: 410_000 }]);
  });

  async function setBudgets(campaignId: number, total: number | null, daily: number | null) {
    await store.db
      .updateTable('campaigns')
      .set({ budget_total_micros: total, budget_daily_micros: daily })
      .where('id', '=', campaignId)
      .execute();
  }

  it('holds a total budget: spend stops within one price of it, the rest is past budget, and the campaign completes', async () => {
    const { id, event } = await pricedCampaign('total-budget', 'cpc', 3_000);
    await setBudgets(id, 10_000, null);
    const click = () => event({ kind: 'click' });
    const first = await store.insertEvents([click(), click()]);
    expect(first.completed).toEqual([]);
    const second = await store.insertEvents([click(), click(), event(), click()]);
    // The third click takes spend to 9,000; the fourth would pass 10,000: stored past budget, and
    // the campaign, which no further click can be charged to, completes.
    expect(second.pastBudget).toEqual([1, 3]);
    expect(second.completed).toEqual([id]);
    expect(second.stored.get('click:invalid')).toBe(2);
    const money = await moneyOf(id);
    expect(money.eventSpend).toBe(9_000);
    expect(money.counterSpend).toBe(9_000);
    expect(money.prices).toEqual([{ billed: 3, spend: 9_000 }]);
    const past = await store.db
      .selectFrom('events')
      .select(['reason', 'cost_micros'])
      .where('campaign_id', '=', id)
      .where('verdict', '=', 'invalid')
      .execute();
    expect(past.map((row) => [row.reason, Number(row.cost_micros)])).toEqual([
      ['past budget', 0],
      ['past budget', 0],
    ]);
    expect((await store.getCampaign(id))?.status).toBe('completed');
    expect((await store.listAudit({ objectType: 'campaign', objectId: String(id) })).at(-1)).toMatchObject({
      actor: 'system',
      action: 'complete',
      reason: 'total budget reached',
    });
  });

  it('holds a daily budget in the campaign time zone until its next local midnight, and charges again the next day', async () => {
    const { campaignIds } = await store.importCampaigns([
      { name: 'daily-budget', campaigns: [campaignInput({ timeZone: 'Asia/Tokyo' })] },
    ]);
    const id = campaignIds[0];
    await setPrice(id, 'cpm', 1_000_000);
    await setBudgets(id, null, 5_500);
    const source = await newPartnerKey(store, 'daily-budget partner', 'd-daily-budget');
    // 12:00 UTC is 21:00 in Tokyo; the next Tokyo midnight is 15:00 UTC.
    const impression = (occurredAt: number) =>
      trackedEvent({ ...source, campaignId: id, occurredAt, priced: true });
    const outcome = await store.insertEvents(Array.from({ length: 7 }, () => impression(at)));
    expect(outcome.pastBudget).toEqual([5, 6]);
    expect(outcome.cappedForTheDay).toEqual([id]);
    expect((await store.getCampaign(id))?.cappedUntil).toBe(Date.parse('2026-06-01T15:00:00Z'));
    const nextDay = await store.insertEvents([impression(Date.parse('2026-06-01T15:30:00Z'))]);
    expect(nextDay.pastBudget).toEqual([]);
    expect((await moneyOf(id)).eventSpend).toBe(6_000);
  });

  it("charges a partner's catch-up after an outage to the day it is stored: events that say they happened yesterday never reopen yesterday's daily budget", async () => {
    const { id, event } = await pricedCampaign('catch-up', 'cpm', 1_000_000);
    await setBudgets(id, null, 5_500);
    // Yesterday (the block's day, UTC) the budget was spent in full and the campaign held.
    const spentYesterday = await store.insertEvents(Array.from({ length: 6 }, () => event()));
    expect(spentYesterday.pastBudget).toEqual([5]);
    // Today the partner sends yesterday's backlog, saying when each event happened: every one is
    // stored now, so each spends today's budget and the backlog stops at it like any other traffic.
    const today = at + 86_400_000;
    const backlog = await store.insertEvents(
      Array.from({ length: 8 }, () => event({ occurredAt: today, eventAt: at + 3_600_000 })),
    );
    expect(backlog.pastBudget).toEqual([5, 6, 7]);
    expect((await moneyOf(id)).eventSpend).toBe(10_000);
    const days = await store.db
      .selectFrom('campaign_counters')
      .select(['day', 'spend_micros'])
      .where('campaign_id', '=', id)
      .where('day', '!=', 'total')
      .orderBy('day')
      .execute();
    expect(days.map((row) => [row.day, Number(row.spend_micros)])).toEqual([
      ['2026-06-01', 5_000],
      ['2026-06-02', 5_000],
    ]);
  });

  it('ends concurrent batches within one price of a total budget, never past it', async () => {
    const cpm = 7_777_777;
    const { id, event } = await pricedCampaign('concurrent-budget', 'cpm', cpm);
    await setBudgets(id, 5_000_000, null);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, () => store.insertEvents(Array.from({ length: 25 }, () => event()))),
    );
    const money = await moneyOf(id);
    expect(money.eventSpend).toBeLessThanOrEqual(5_000_000);
    expect(money.eventSpend).toBeGreaterThan(5_000_000 - 7_778);
    const charged = money.costs.filter((cost) => cost > 0).length;
    expect(outcomes.reduce((sum, outcome) => sum + outcome.pastBudget.length, 0)).toBe(1000 - charged);
    expect(money.eventSpend).toBe(cpmCumulativeCost(micros(cpm), charged));
    expect(outcomes.flatMap((outcome) => outcome.completed)).toEqual([id]);
  });

  const setShare = (partnerId: number, basisPoints: number, from: number) =>
    store.addRevenueShare({ partnerId, basisPoints, effectiveFrom: from, actor: 'test' }, from);

  /** Each partner's earnings on a campaign: from its events, its rollups, and its no-loss counters. */
  async function earningsOf(campaignId: number, partnerId: number) {
    const events = await store.db
      .selectFrom('events')
      .select(['cost_micros', 'earnings_micros'])
      .where('campaign_id', '=', campaignId)
      .where('partner_id', '=', partnerId)
      .orderBy('id')
      .execute();
    const rolled = await sql<{ spend: string | number | null; earnings: string | number | null }>`
      select sum(spend_micros) as spend, sum(earnings_micros) as earnings from event_rollups_live
      where campaign_id = ${campaignId} and partner_id = ${partnerId}`.execute(store.db);
    // Summed by share: on SQLite, what batches appended since the last fold is rows of its own.
    const counters = await store.db
      .selectFrom('partner_earnings_live as earned')
      .innerJoin('campaign_prices', 'campaign_prices.id', 'earned.price_id')
      .select((eb) => [
        eb.fn.sum<number | string>('earned.spend_micros').as('spend_micros'),
        eb.fn.sum<number | string>('earned.earnings_micros').as('earnings_micros'),
      ])
      .where('campaign_prices.campaign_id', '=', campaignId)
      .where('earned.partner_id', '=', partnerId)
      .groupBy(['earned.price_id', 'earned.share_id'])
      .orderBy('earned.price_id')
      .orderBy('earned.share_id')
      .execute();
    return {
      earnings: events.map((row) => Number(row.earnings_micros)),
      eventEarnings: events.reduce((sum, row) => sum + Number(row.earnings_micros), 0),
      rollupEarnings: Number(rolled.rows[0]?.earnings ?? 0),
      counters: counters.map((row) => ({
        spend: Number(row.spend_micros),
        earnings: Number(row.earnings_micros),
      })),
    };
  }

  it("earns each partner its revenue share of the spend on its events with no micro lost, from the share's date on", async () => {
    const cpm = 2_500_001;
    const { id, event, partnerId } = await pricedCampaign('earnings', 'cpm', cpm);
    const other = await newPartnerKey(store, 'earnings other partner', 'd-earnings-other');
    await setShare(partnerId, 7_000, at - 86_400_000);
    await setShare(other.partnerId, 3_333, at - 86_400_000);
    // A later share for the first partner, effective an hour after `at`: not for the events before it.
    await setShare(partnerId, 5_000, at + 3_600_000);
    for (let batch = 0; batch < 7; batch++)
      await store.insertEvents([
        ...Array.from({ length: 335 }, () => event()),
        ...Array.from({ length: 100 }, () => event({ ...other })),
        event({ verdict: 'invalid', reason: 'known bot' }),
      ]);
    await store.insertEvents(Array.from({ length: 10 }, () => event({ occurredAt: at + 3_600_000 })));
    const mine = await earningsOf(id, partnerId);
    const theirs = await earningsOf(id, other.partnerId);
    // Spend of the whole campaign is one CPM sequence of 2,355 + 700 impressions; each partner's
    // earnings are exact on the spend of its own events under each share.
    const spendOf = async (partner: number, before: number) =>
      Number(
        (
          await sql<{ spend: string | number }>`select coalesce(sum(cost_micros), 0) as spend from events
            where campaign_id = ${id} and partner_id = ${partner} and occurred_at ${sql.raw(before > 0 ? '<' : '>=')} ${Math.abs(before)}`.execute(
            store.db,
          )
        ).rows[0]?.spend,
      );
    const mineBefore = await spendOf(partnerId, at + 3_600_000);
    const mineAfter = await spendOf(partnerId, -(at + 3_600_000));
    const theirsAll = await spendOf(other.partnerId, at + 3_600_000);
    // docs/product-rules.md (D18) quotes these figures.
    expect([mineBefore, Math.floor((mineBefore * 7_000) / 10_000)]).toEqual([5_862_502, 4_103_751]);
    expect(mine.counters).toEqual([
      { spend: mineBefore, earnings: Math.floor((mineBefore * 7_000) / 10_000) },
      { spend: mineAfter, earnings: Math.floor((mineAfter * 5_000) / 10_000) },
    ]);
    expect(mine.eventEarnings).toBe(
      Math.floor((mineBefore * 7_000) / 10_000) + Math.floor((mineAfter * 5_000) / 10_000),
    );
    expect(mine.rollupEarnings).toBe(mine.eventEarnings);
    expect(theirs.counters).toEqual([
      { spend: theirsAll, earnings: Math.floor((theirsAll * 3_333) / 10_000) },
    ]);
    expect(theirs.eventEarnings).toBe(Math.floor((theirsAll * 3_333) / 10_000));
    expect(theirs.rollupEarnings).toBe(theirs.eventEarnings);
    expect((await moneyOf(id)).eventSpend).toBe(cpmCumulativeCost(micros(cpm), 7 * 435 + 10));
  });

  it('counts every unit and micro at a price, whether or not the partner of each earns a share', async () => {
    // F(n) = floor(1.5 n): impressions cost 1, 2, 1, 2, … so a unit counted twice or lost shows.
    const { id, event, partnerId } = await pricedCampaign('mixed-shares', 'cpm', 1_500);
    const unshared = await newPartnerKey(store, 'mixed-shares unshared', 'd-mixed-unshared');
    await setShare(partnerId, 5_000, at - 86_400_000);
    const batch = () => [
      event(),
      event({ ...unshared }),
      event(),
      event({ ...unshared }),
      event({ ...unshared }),
    ];
    await store.insertEvents(batch());
    await store.insertEvents(batch());
    const expected = { billed: 10, spend: Math.floor(1.5 * 10) };
    expect((await moneyOf(id)).prices).toEqual([expected]);
    // The sharing partner's are the 1st, 3rd, 6th and 8th units: 1 + 1 + 2 + 2 micros, half earned.
    const earned = await earningsOf(id, partnerId);
    expect(earned.counters).toEqual([{ spend: 6, earnings: 3 }]);
    expect((await earningsOf(id, unshared.partnerId)).counters).toEqual([]);
    // The same after the appended rows are folded into the prices' and the earnings' rows.
    await store.foldAppended();
    expect((await moneyOf(id)).prices).toEqual([expected]);
    expect((await earningsOf(id, partnerId)).counters).toEqual(earned.counters);
  });

  it("earns under the share in force at each event when a new share starts within a batch's minute", async () => {
    // F(n) = floor(1.5 n): units cost 1, 2, 1, 2, 1, 2, … All events of a batch are of one minute,
    // one campaign, partner and placement: only the share tells the first three from the rest.
    const { id, event, partnerId } = await pricedCampaign('share-mid-minute', 'cpm', 1_500);
    await setShare(partnerId, 5_000, at - 86_400_000);
    await setShare(partnerId, 2_500, at + 30_000);
    const later = () => event({ occurredAt: at + 30_000 });
    await store.insertEvents([event(), event(), event(), later(), later(), later()]);
    // Units 1 to 3 (1 + 2 + 1) at 50%, units 4 to 6 (2 + 1 + 2) at 25%.
    const counted = [
      { spend: 4, earnings: 2 },
      { spend: 5, earnings: 1 },
    ];
    expect((await earningsOf(id, partnerId)).counters).toEqual(counted);
    expect((await moneyOf(id)).prices).toEqual([{ billed: 6, spend: 9 }]);
    await store.foldAppended();
    expect((await earningsOf(id, partnerId)).counters).toEqual(counted);
    // The next batch earns on from the second share's spend (5, 1 earned): units 7 to 9 cost
    // 1 + 2 + 1, and take it to 6, 8 and 9, at 25% 1, 2 and 2 earned in all: [0, 1, 0]. From a
    // spend of 0 they would earn [0, 0, 1].
    await store.insertEvents([later(), later(), later()]);
    const after = await earningsOf(id, partnerId);
    expect(after.earnings).toEqual([0, 1, 1, 0, 0, 1, 0, 1, 0]);
    expect(after.counters).toEqual([
      { spend: 4, earnings: 2 },
      { spend: 9, earnings: 2 },
    ]);
    expect(after.rollupEarnings).toBe(after.eventEarnings);
    expect((await moneyOf(id)).prices).toEqual([{ billed: 9, spend: 13 }]);
  });

  it('keeps the spend through compaction into campaign_rollups and the campaigns list', async () => {
    const { id, event } = await pricedCampaign('compaction', 'cpc', 125_000);
    await store.insertEvents([event({ kind: 'click' }), event({ kind: 'click' }), event()]);
    await store.compactRollups(at + 3_600_000);
    const summed = await sql<{ spend: string | number | null }>`
      select sum(spend_micros) as spend from campaign_rollups where campaign_id = ${id}`.execute(store.db);
    expect(Number(summed.rows[0]?.spend)).toBe(250_000);
    const delivery = await store.db
      .selectFrom('campaign_delivery')
      .select('spend_micros')
      .where('campaign_id', '=', id)
      .executeTakeFirst();
    expect(Number(delivery?.spend_micros)).toBe(250_000);
    // A late batch adding to a quarter hour already compacted adds its spend there too.
    await store.insertEvents([event({ kind: 'click' })]);
    const late = await sql<{ spend: string | number | null }>`
      select sum(spend_micros) as spend from campaign_rollups where campaign_id = ${id}`.execute(store.db);
    expect(Number(late.rows[0]?.spend)).toBe(375_000);
  });

  it('prices CPM runs and earnings on from what was folded and what was appended, whichever connection did either', async () => {
    // F(n) = floor(1.5 n), then floor(2.5 n): the impressions cost 1, 2, 1, 2, … then 2, 3, 2, 3, …
    // so a run priced from a wrong count shows.
    const { id, event, partnerId } = await pricedCampaign('fold-runs', 'cpm', 1_500);
    await setShare(partnerId, 3_333, at - 86_400_000);
    // A second connection to the same store (on SQLite, another process's would be the same): its
    // batches, its folds and its new price change what this one knows, which this one must notice.
    const other = await database.open();
    try {
      const runs = [{ perUnit: 1.5, units: 0 }];
      const costs: number[] = [];
      const steps = [
        'this',
        'this',
        'fold',
        'other',
        'this',
        'other fold',
        'this',
        'other price',
        'this',
        'other',
        'fold',
        'this',
      ];
      for (const step of steps) {
        const run = runs[runs.length - 1];
        if (step === 'fold') await store.foldAppended();
        else if (step === 'other fold') await other.foldAppended();
        else if (step === 'other price') {
          await setCampaignPrice(other, id, { model: 'cpm', amountMicros: 2_500, since: at });
          runs.push({ perUnit: 2.5, units: 0 });
        } else {
          await (step === 'this' ? store : other).insertEvents([event(), event(), event()]);
          for (let i = 0; i < 3; i++, run.units++)
            costs.push(Math.floor(run.perUnit * (run.units + 1)) - Math.floor(run.perUnit * run.units));
        }
      }
      const money = await moneyOf(id);
      expect(money.costs).toEqual(costs);
      const spent = runs.map(({ perUnit, units }) => ({ billed: units, spend: Math.floor(perUnit * units) }));
      expect(money.prices).toEqual(spent);
      const earned = await earningsOf(id, partnerId);
      expect(earned.counters).toEqual(
        spent.map(({ spend }) => ({ spend, earnings: Math.floor((spend * 3_333) / 10_000) })),
      );
      expect(earned.eventEarnings).toBe(earned.counters.reduce((sum, counter) => sum + counter.earnings, 0));
    } finally {
      await other.close();
    }
  });

  /**
   * A campaign charging 1 micro a click, half of it its partner's: a click earns 1 after an odd
   * spend, 0 after an even one, so a spend counted twice or left out shows in what the next click
   * earns. Returns what `steps` made each click earn, and the partner's counters after.
   */
  async function clickEarnings(
    name: string,
    steps: (click: () => TrackedEvent, other: Store) => Promise<void>,
  ) {
    const { id, event, partnerId } = await pricedCampaign(name, 'cpc', 1);
    await setShare(partnerId, 5_000, at - 86_400_000);
    const other = await database.open();
    try {
      await steps(() => event({ kind: 'click' }), other);
    } finally {
      await other.close();
    }
    const { earnings, counters } = await earningsOf(id, partnerId);
    return { earnings, counters };
  }

  /** Runs `work` in a transaction of `store` that then fails, so nothing of it stays. */
  const rolledBack = (work: (tx: Store) => Promise<unknown>) =>
    expect(
      store.transaction(async (tx) => {
        await work(tx);
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');

  it("earns on from the right spend after a fold of this connection's that took in another connection's charges", async () => {
    const earned = await clickEarnings('fold-others', async (click, other) => {
      await store.insertEvents([click()]);
      await other.insertEvents([click(), click()]);
      await store.foldAppended();
      await store.insertEvents([click()]);
      await store.foldAppended();
      await store.insertEvents([click()]);
    });
    // Spend 1 to 5 micros: earnings floor(spend / 2) each time, so 0, 1, 0, 1, 0.
    expect(earned).toEqual({ earnings: [0, 1, 0, 1, 0], counters: [{ spend: 5, earnings: 2 }] });
  });

  it('earns on from the right spend after another connection charged, twice in a row', async () => {
    const earned = await clickEarnings('others-then-twice', async (click, other) => {
      await store.insertEvents([click()]);
      await other.insertEvents([click(), click()]);
      await store.insertEvents([click()]);
      await store.insertEvents([click()]);
    });
    expect(earned).toEqual({ earnings: [0, 1, 0, 1, 0], counters: [{ spend: 5, earnings: 2 }] });
  });

  it("earns on from the right spend after a batch of this connection's was rolled back, with or without a fold in it", async () => {
    const earned = await clickEarnings('rolled-back-folds', async (click) => {
      await store.insertEvents([click()]);
      await rolledBack((tx) => tx.insertEvents([click()]));
      await store.foldAppended();
      await store.insertEvents([click()]);
      // Folded first, so the transaction below starts with nothing appended and ends with nothing
      // appended either way: only the count of folds in `meta` tells its fold was rolled back.
      await store.foldAppended();
      await rolledBack(async (tx) => {
        await tx.insertEvents([click()]);
        await tx.foldAppended();
      });
      await store.insertEvents([click()]);
    });
    // The rolled-back clicks left no trace: spend 1, 2, 3 earns 0, 1, 0.
    expect(earned).toEqual({ earnings: [0, 1, 0], counters: [{ spend: 3, earnings: 1 }] });
  });

  it("prices a CPM run from the rows that exist after a batch of its own was rolled back and another connection's took its ids", async () => {
    // F(n) = floor(1.25 n): units 1 to 5 cost 1, 1, 1, 2, 1.
    const { id, event } = await pricedCampaign('rolled-back', 'cpm', 1_250);
    const other = await database.open();
    try {
      await store.insertEvents([event(), event()]);
      // A batch of this connection appends its charge, then its transaction fails: nothing of it stays.
      await expect(
        store.transaction(async (tx) => {
          await tx.insertEvents([event(), event(), event()]);
          throw new Error('rolled back on purpose');
        }),
      ).rejects.toThrow('rolled back on purpose');
      // Another connection's batch appends as many rows (one, for the price) with fewer units, and
      // gets the same id: only its commit tells this connection that its sums are stale.
      await other.insertEvents([event()]);
      await store.insertEvents([event(), event()]);
      const money = await moneyOf(id);
      expect(money.costs).toEqual([1, 1, 1, 2, 1]);
      expect(money.prices).toEqual([{ billed: 5, spend: 6 }]);
    } finally {
      await other.close();
    }
  });

  it("keeps what a charged event and its replay carry besides money: the partner's time and the viewer", async () => {
    // A CPM of 1 unit: each impression costs 1,000 micros.
    const { id, event } = await pricedCampaign('carried', 'cpm', 1_000_000);
    const shown = at - 60_000;
    const carried = { viewer: true, eventAt: shown, idempotencyKey: 'carried-1' };
    await store.insertEvents([event(carried), event(carried)]);
    const rows = (await moneyOf(id)).events;
    expect(rows.map((row) => [row.verdict, Number(row.event_at), Number(row.cost_micros)])).toEqual([
      ['counted', shown, 1_000],
      ['duplicate', shown, 0],
    ]);
    const viewers = await sql<{ viewers: string | number | null }>`
      select sum(with_viewer) as viewers from event_rollups_live where campaign_id = ${id}`.execute(store.db);
    expect(Number(viewers.rows[0]?.viewers)).toBe(2);
  });
});
