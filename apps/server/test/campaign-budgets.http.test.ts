import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * A campaign's spend budgets through the management API (D18): the operator and the campaign's own
 * advertiser set, change and remove them without sending it back to review, malformed ones are
 * refused naming the field, every change is audited, and a budget set through the API holds the
 * events tracked after it.
 */
describe.each(ENGINES)('campaign budgets through the management API, on %s', (engine) => {
  let t: TestApp;
  let advertiserId = 0;
  let running = 0;
  beforeEach(async () => {
    t = await createTestApp({ engine });
    [running] = await t.addCampaigns([campaign({ title: 'Budgeted' })], 'Budgeted Ads');
    advertiserId = (await t.campaigns.get(running)).advertiserId;
  });
  afterEach(() => t.close());

  const units = (amount: number) => amount * 1_000_000;
  const budgetOf = async (id: number) => (await t.admin('GET', `/campaigns/${id}`)).json().data.budget;
  const managerToken = async () =>
    (
      await t.services.tokens.create({
        label: 'advertiser manager',
        account: `advertiser:${advertiserId}`,
        role: 'manager',
      })
    ).plaintext;

  it('creates a campaign with budgets and answers them with the currency; none is both null', async () => {
    const created = await t.admin('POST', '/campaigns', {
      advertiserId,
      title: 'New',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
      budget: { totalMicros: units(500), dailyMicros: units(50) },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    const expected = { totalMicros: units(500), dailyMicros: units(50), currency: 'USD' };
    expect(created.json().data.budget).toEqual(expected);
    expect(await budgetOf(id)).toEqual(expected);
    expect(await budgetOf(running)).toEqual({ totalMicros: null, dailyMicros: null, currency: 'USD' });
  });

  it('sets, changes and removes budgets, keeps the campaign running, and audits old and new', async () => {
    const set = await t.admin('PATCH', `/campaigns/${running}`, { budget: { totalMicros: units(500) } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.budget).toEqual({ totalMicros: units(500), dailyMicros: null, currency: 'USD' });
    expect(set.json().data.status).toBe('running');
    // Sending back the budget as read (with its currency) is accepted.
    const echoed = await t.admin('PATCH', `/campaigns/${running}`, { budget: set.json().data.budget });
    expect(echoed.statusCode, echoed.body).toBe(200);
    const daily = await t.admin('PATCH', `/campaigns/${running}`, {
      budget: { totalMicros: units(500), dailyMicros: units(50) },
    });
    expect(daily.json().data.budget.dailyMicros).toBe(units(50));
    const removed = await t.admin('PATCH', `/campaigns/${running}`, { budget: null });
    expect(removed.json().data.budget).toEqual({ totalMicros: null, dailyMicros: null, currency: 'USD' });
    expect((await t.campaigns.get(running)).budget).toEqual({ totalMicros: null, dailyMicros: null });

    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${running}`)).json()
      .data as Array<{ action: string; before: { budget: unknown }; after: { budget: unknown } }>;
    const changes = trail
      .filter((entry) => entry.action === 'update')
      .map((entry) => [entry.before.budget, entry.after.budget]);
    const none = { totalMicros: null, dailyMicros: null };
    expect(changes).toEqual(
      expect.arrayContaining([
        [none, { totalMicros: units(500), dailyMicros: null }],
        [
          { totalMicros: units(500), dailyMicros: null },
          { totalMicros: units(500), dailyMicros: units(50) },
        ],
        [{ totalMicros: units(500), dailyMicros: units(50) }, none],
      ]),
    );
  });

  it('lets an advertiser set the budgets of its own campaigns without review, and not of another’s', async () => {
    const manager = await managerToken();
    const set = await t.admin(
      'PATCH',
      `/campaigns/${running}`,
      { budget: { totalMicros: units(200), dailyMicros: units(20) } },
      manager,
    );
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.status).toBe('running');
    expect((await t.campaigns.get(running)).budget).toEqual({
      totalMicros: units(200),
      dailyMicros: units(20),
    });
    const created = await t.admin(
      'POST',
      '/campaigns',
      { ...campaign({ budget: { totalMicros: units(10) } }), status: undefined, advertiserId },
      manager,
    );
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.budget.totalMicros).toBe(units(10));
    const [foreign] = await t.addCampaigns([campaign()], 'Foreign Ads');
    const hidden = await t.admin('PATCH', `/campaigns/${foreign}`, { budget: null }, manager);
    expect(hidden.statusCode).toBe(404);
  });

  it('refuses a malformed budget naming the field, and changes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ totalMicros: 0 }, 'budget.totalMicros'],
      [{ dailyMicros: -5 }, 'budget.dailyMicros'],
      [{ totalMicros: 2.5 }, 'budget.totalMicros'],
      [{ dailyMicros: '50000000' }, 'budget.dailyMicros'],
      [{ totalMicros: 9_000_000_000_000_001 }, 'budget.totalMicros'],
      [{ totalMicros: 1_000, currency: 'EUR' }, 'budget.currency'],
      [{ totalMicros: 1_000, weekly: 5 }, 'budget.weekly'],
      ['500.00', 'budget'],
    ];
    for (const [budget, field] of cases) {
      const answer = await t.admin('PATCH', `/campaigns/${running}`, { budget });
      expect([400, 422], `${JSON.stringify(budget)}: ${answer.body}`).toContain(answer.statusCode);
      const named = [
        answer.json().field,
        ...(answer.json().problems ?? []).map((p: { field: string }) => p.field),
      ];
      expect(named, `${JSON.stringify(budget)}: ${answer.body}`).toContain(field);
    }
    expect((await t.campaigns.get(running)).budget).toEqual({ totalMicros: null, dailyMicros: null });
  });

  it('holds events tracked after a budget is set: a CPC campaign budgeted two clicks completes after two', async () => {
    const price = { model: 'cpc', amountMicros: 350_000 };
    const set = await t.admin('PATCH', `/campaigns/${running}`, {
      price,
      budget: { totalMicros: 2 * price.amountMicros },
    });
    expect(set.statusCode, set.body).toBe(200);
    const source = await newPartnerKey(t.store, 'budget partner', 'd-budget');
    const click = () =>
      trackedEvent({ ...source, campaignId: running, occurredAt: Date.now(), kind: 'click', priced: true });
    const first = await t.store.insertEvents([click()]);
    expect(first.completed).toEqual([]);
    const second = await t.store.insertEvents([click()]);
    expect(second.completed).toEqual([running]);
    const read = (await t.admin('GET', `/campaigns/${running}`)).json().data;
    expect(read.status).toBe('completed');

    // Raising the total budget before the flight's end makes it paused, to resume; audited as such.
    const raised = await t.admin('PATCH', `/campaigns/${running}`, {
      budget: { totalMicros: 3 * price.amountMicros },
    });
    expect(raised.statusCode, raised.body).toBe(200);
    expect(raised.json().data.status).toBe('paused');
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${running}`)).json()
      .data as Array<{ action: string; reason: string | null }>;
    expect(trail.filter((entry) => entry.action === 'update').map((entry) => entry.reason)).toContain(
      'total budget raised: paused, to resume',
    );
    const resumed = await t.admin('POST', `/campaigns/${running}/resume`, {});
    expect(resumed.json().data.status).toBe('running');
    expect((await t.store.insertEvents([click()])).completed).toEqual([running]);
  });

  it('answers the spend against each budget and when each runs out at the last hour’s pace', async () => {
    const price = { model: 'cpc', amountMicros: 500_000 };
    // A daily budget of 10.00 and a total of 1,000.00 without an end; nothing spent yet: no forecast.
    await t.admin('PATCH', `/campaigns/${running}`, {
      price,
      budget: { totalMicros: units(1000), dailyMicros: units(10) },
    });
    const spendOf = async () => (await t.admin('GET', `/campaigns/${running}`)).json().data.spend;
    expect(await spendOf()).toMatchObject({
      dayMicros: 0,
      totalMicros: 0,
      currency: 'USD',
      forecast: { total: null, daily: null },
    });
    // Four clicks in the last hour: 2.00 an hour. The daily budget's 8.00 left go in 4 hours, unless
    // the day ends first; the total's 998.00 in 499 hours, as it has no end.
    const source = await newPartnerKey(t.store, 'forecast partner', 'd-forecast');
    const now = Date.now();
    await t.store.insertEvents(
      Array.from({ length: 4 }, (_, i) =>
        trackedEvent({
          ...source,
          campaignId: running,
          // Seconds apart, not minutes: all four fall on today's date but within 3 s of midnight.
          occurredAt: now - i * 1_000,
          kind: 'click',
          priced: true,
        }),
      ),
    );
    const spend = await spendOf();
    expect(spend).toMatchObject({ dayMicros: units(2), totalMicros: units(2) });
    const hoursFrom = (at: string) => (Date.parse(at) - now) / 3_600_000;
    expect(spend.forecast.total.state).toBe('runs_out');
    expect(hoursFrom(spend.forecast.total.at)).toBeCloseTo(499, 1);
    const endOfDay = new Date(now).setUTCHours(24, 0, 0, 0);
    if (now + 4 * 3_600_000 < endOfDay - 60_000) {
      expect(spend.forecast.daily.state).toBe('runs_out');
      expect(hoursFrom(spend.forecast.daily.at)).toBeCloseTo(4, 1);
    } else expect(spend.forecast.daily).toEqual({ state: 'lasts' });
  });

  it('keeps a campaign completed by its total budget completed when the budget is lowered', async () => {
    const price = { model: 'cpc', amountMicros: 350_000 };
    await t.admin('PATCH', `/campaigns/${running}`, { price, budget: { totalMicros: price.amountMicros } });
    const source = await newPartnerKey(t.store, 'budget partner', 'd-budget');
    const click = trackedEvent({
      ...source,
      campaignId: running,
      occurredAt: Date.now(),
      kind: 'click',
      priced: true,
    });
    expect((await t.store.insertEvents([click])).completed).toEqual([running]);
    const lowered = await t.admin('PATCH', `/campaigns/${running}`, { budget: { totalMicros: 1_000 } });
    expect(lowered.statusCode, lowered.body).toBe(200);
    expect(lowered.json().data.status).toBe('completed');
  });
});
