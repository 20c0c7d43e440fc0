import { afterEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

/**
 * An advertiser's budgets through the management API (D18): set by the operator or the advertiser's
 * own people, answered with the currency and its spend, malformed ones refused naming the field; and
 * through tracking and fetch: once its campaigns together spent the budget, their next event is
 * `invalid`, fetch stops offering them (until the month ends, or the budget is raised), and raising it
 * resumes them.
 */
describe.each(ENGINES)('advertiser budgets through the API and fetch, on %s', (engine) => {
  let t: TestApp;
  let now = 0;
  afterEach(() => t.close());

  const start = async () => {
    now = Date.parse('2026-06-10T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
    const price = { model: 'cpc', amountMicros: 400_000 };
    const ids = await t.addCampaigns([campaign({ price }), campaign({ price })], 'Budget Ads');
    const advertiserId = (await t.campaigns.get(ids[0])).advertiserId;
    return { ids: ids as [number, number], advertiserId };
  };
  const served = async () => {
    await t.state.refresh();
    return (await t.fetch('placement=header_banner'))
      .json()
      .data.map((c: { id: number }) => c.id)
      .sort();
  };
  /** A click after its impression (free at a CPC), a minute after the last: never a double click. */
  const click = async (id: number) => {
    now += 60_000;
    await t.track('impression', { campaignId: id, placement: 'header_banner' });
    return t.track('click', { campaignId: id, placement: 'header_banner' });
  };
  /** Tracks a shown and clicked campaign and answers what the store made of it: its verdict and reason. */
  const verdict = async (id: number) => {
    expect((await click(id)).statusCode).toBe(200);
    const row = await t.store.db
      .selectFrom('events')
      .select(['verdict', 'reason'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    return row.reason === null ? row.verdict : `${row.verdict}: ${row.reason}`;
  };

  it('sets budgets by the operator and the advertiser’s manager, answers them with currency and spend, refuses bad ones', async () => {
    const { advertiserId } = await start();
    const set = await t.admin('PATCH', `/advertisers/${advertiserId}`, {
      budget: { totalMicros: 5_000_000, monthlyMicros: 1_000_000 },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.budget).toEqual({
      totalMicros: 5_000_000,
      monthlyMicros: 1_000_000,
      currency: 'USD',
    });
    const manager = (
      await t.services.tokens.create({
        label: 'advertiser manager',
        account: `advertiser:${advertiserId}`,
        role: 'manager',
      })
    ).plaintext;
    // Sent back as read, with its currency, by the advertiser's own manager.
    const own = await t.admin(
      'PATCH',
      `/advertisers/${advertiserId}`,
      { budget: { ...set.json().data.budget, monthlyMicros: null } },
      manager,
    );
    expect(own.statusCode, own.body).toBe(200);
    const read = (await t.admin('GET', `/advertisers/${advertiserId}`, undefined, manager)).json().data;
    expect(read.budget).toEqual({ totalMicros: 5_000_000, monthlyMicros: null, currency: 'USD' });
    expect(read.spend).toEqual({
      month: '2026-06',
      monthMicros: 0,
      totalMicros: 0,
      currency: 'USD',
      forecast: { total: null, month: null },
    });
    const renamed = await t.admin('PATCH', `/advertisers/${advertiserId}`, { name: 'Mine' }, manager);
    expect(renamed.statusCode).toBe(403);
    for (const [budget, field] of [
      [{ totalMicros: 0 }, 'budget.totalMicros'],
      [{ monthlyMicros: 2.5 }, 'budget.monthlyMicros'],
      [{ totalMicros: 1_000, currency: 'EUR' }, 'budget.currency'],
      [{ dailyMicros: 1_000 }, 'budget.dailyMicros'],
    ] as const) {
      const answer = await t.admin('PATCH', `/advertisers/${advertiserId}`, { budget });
      expect([400, 422], answer.body).toContain(answer.statusCode);
      const named = [
        answer.json().field,
        ...(answer.json().problems ?? []).map((p: { field: string }) => p.field),
      ];
      expect(named, answer.body).toContain(field);
    }
    const created = await t.admin('POST', '/advertisers', {
      name: 'New',
      budget: { monthlyMicros: 7_000_000 },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.budget).toEqual({
      totalMicros: null,
      monthlyMicros: 7_000_000,
      currency: 'USD',
    });
    const audit = (await t.admin('GET', `/audit?objectType=advertiser&objectId=${advertiserId}`)).json().data;
    expect(audit.filter((entry: { action: string }) => entry.action === 'update')).toHaveLength(2);
  });

  it('stops offering the advertiser’s campaigns once they spent its total budget, and resumes them when it is raised', async () => {
    const { ids, advertiserId } = await start();
    const [a, b] = ids;
    await t.admin('PATCH', `/advertisers/${advertiserId}`, { budget: { totalMicros: 1_000_000 } });
    expect(await served()).toEqual([a, b].sort());
    // 400,000 a click: two fit in 1,000,000; the third, of either campaign, would pass it.
    expect([await verdict(a), await verdict(b)]).toEqual(['counted', 'counted']);
    expect(await served()).toEqual([]);
    expect(await verdict(a)).toBe('invalid: past advertiser budget');
    const why = (await t.admin('GET', `/campaigns/${b}/why`)).json().data.reasons;
    expect(why).toEqual([
      expect.objectContaining({ code: 'advertiser_budget_spent', budgetHeldUntil: null }),
    ]);
    const spend = (await t.admin('GET', `/advertisers/${advertiserId}`)).json().data.spend;
    expect(spend).toMatchObject({ monthMicros: 800_000, totalMicros: 800_000 });
    // 200,000 left at the last hour's 800,000: a quarter of an hour from now at this pace.
    expect(spend.forecast).toEqual({ total: { state: 'runs_out', at: expect.any(String) }, month: null });
    expect(Date.parse(spend.forecast.total.at) - now).toBe(15 * 60_000);

    await t.admin('PATCH', `/advertisers/${advertiserId}`, { budget: { totalMicros: 2_000_000 } });
    expect(await served()).toEqual([a, b].sort());
    expect(await verdict(b)).toBe('counted');
  });

  it('holds the campaigns on a spent monthly budget until the next billing month, then offers them again', async () => {
    const { ids, advertiserId } = await start();
    const [a, b] = ids;
    await t.admin('PATCH', `/advertisers/${advertiserId}`, { budget: { monthlyMicros: 500_000 } });
    expect(await verdict(a)).toBe('counted');
    expect(await served()).toEqual([]);
    now = Date.parse('2026-07-01T00:00:00Z');
    expect(await served()).toEqual([a, b].sort());
    expect(await verdict(b)).toBe('counted');
  });

  it('never holds an advertiser without a budget', async () => {
    const { ids } = await start();
    const [a, b] = ids;
    for (let i = 0; i < 5; i++) expect([await verdict(a), await verdict(b)]).toEqual(['counted', 'counted']);
    expect(await served()).toEqual([a, b].sort());
  });
});
