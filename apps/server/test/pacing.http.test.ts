import { afterEach, describe, expect, it } from 'vitest';
import { PACING_NEEDS_CAP_MESSAGE, START_CHANCE, UNPACED } from '../src/domain/pacing.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';
import { trackedEvent } from './helpers/tracked-event.js';

const HOUR = 3_600_000;

/**
 * Even pacing (D16) through the product: the field on the management API, and the pacing step
 * holding a campaign ahead of its plan back from fetches (still tracking its displays), naming it
 * in "why isn't it serving?", and serving it again once the plan has moved on.
 */
describe.each(ENGINES)('pacing on %s', (engine) => {
  let t: TestApp;
  let now: number;
  afterEach(() => t.close());

  /**
   * A fresh store at noon. These tests fetch a few times an hour, and say so as the operator's prior
   * (one fetch an hour): a campaign behind its plan is then drawn at every fetch from the first step,
   * not started at a small chance while its traffic is learnt.
   */
  async function start(campaigns: unknown[], pacingPriorFetchesPerHour = 1): Promise<number[]> {
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now, pacingPriorFetchesPerHour });
    return t.addCampaigns(campaigns);
  }

  const fetched = async (): Promise<number[]> => {
    const res = await t.fetch('placement=header_banner&limit=10');
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as Array<{ id: number }>).map((c) => c.id);
  };
  const impressions = async (id: number, count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await t.track('impression', { campaignId: id, placement: 'header_banner' });
      expect(res.statusCode, res.body).toBe(200);
    }
  };
  /** 200 impressions of the placement stored as traffic from the past, `apartMs` apart from `from`. */
  const pastImpressions = (id: number, from: number, apartMs: number) =>
    t.store.insertEvents(
      Array.from({ length: 200 }, (_, i) =>
        trackedEvent({ campaignId: id, partnerId: 1, apiKeyId: t.apiKeyId, occurredAt: from + i * apartMs }),
      ),
    );
  const whyCodes = async (id: number): Promise<string[]> => {
    const res = await t.admin('GET', `/campaigns/${id}/why`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data.reasons as Array<{ code: string }>).map((reason) => reason.code);
  };

  it('takes pacing on the management API: asap by default, even only with a cap or budget it can spread', async () => {
    const [id] = await start([campaign()]);
    expect((await t.admin('GET', `/campaigns/${id}`)).json().data.pacing).toBe('asap');
    const refused = await t.admin('PATCH', `/campaigns/${id}`, { pacing: 'even' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().problems).toEqual([{ field: 'pacing', message: PACING_NEEDS_CAP_MESSAGE }]);
    const total = await t.admin('PATCH', `/campaigns/${id}`, {
      pacing: 'even',
      caps: { impressionsTotal: 500 },
    });
    expect(total.statusCode, 'a total cap needs an end to spread over').toBe(422);
    const daily = await t.admin('PATCH', `/campaigns/${id}`, {
      pacing: 'even',
      caps: { impressionsDaily: 100 },
    });
    expect(daily.statusCode, daily.body).toBe(200);
    expect(daily.json().data).toMatchObject({ pacing: 'even', status: 'running' });
    const wrong = await t.admin('PATCH', `/campaigns/${id}`, { pacing: 'slow' });
    expect(wrong.json().problems).toEqual([{ field: 'pacing', message: 'must be one of: asap, even' }]);
    // A spend budget is spread like a cap (D18): a daily one, or a total one with an end.
    const [budgeted] = await t.addCampaigns([campaign()]);
    const byTotal = { pacing: 'even', budget: { totalMicros: 5_000_000 } };
    expect((await t.admin('PATCH', `/campaigns/${budgeted}`, byTotal)).statusCode).toBe(422);
    const byDay = await t.admin('PATCH', `/campaigns/${budgeted}`, {
      pacing: 'even',
      budget: { dailyMicros: 5_000_000 },
    });
    expect(byDay.statusCode, byDay.body).toBe(200);
    expect(byDay.json().data).toMatchObject({ pacing: 'even', budget: { dailyMicros: 5_000_000 } });
  });

  it('holds an even campaign ahead of its plan back from fetches, still tracks it, and serves it again as the plan moves on', async () => {
    // At noon with no traffic history (a flat plan), a daily cap of 100 plans 50 by now.
    const [even, asap] = await start([
      campaign({ title: 'Even', pacing: 'even', caps: { impressionsDaily: 100 } }),
      campaign({ title: 'Asap', caps: { impressionsDaily: 100 } }),
    ]);
    await t.services.pacing.step();
    expect((await fetched()).sort()).toEqual([even, asap].sort());
    expect(await whyCodes(even)).toEqual([]);

    await impressions(even, 55);
    await impressions(asap, 55);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([asap]);
    expect(await whyCodes(even)).toEqual(['pacing_ahead']);
    // A display of what was fetched a moment before is still tracked and billed.
    await impressions(even, 1);
    const counted = await t.store.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', even)
      .where('verdict', '=', 'counted')
      .executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(56);

    now += 6 * HOUR; // 18:00: the plan is at 75
    await t.services.pacing.step();
    expect((await fetched()).sort()).toEqual([even, asap].sort());
    expect(await whyCodes(even)).toEqual([]);
  });

  it('plans a scheduled campaign’s daily cap over its hours of the week, not the whole day', async () => {
    // Monday with no traffic history (flat plans), at 14:00 UTC: a daily cap of 80 planned over
    // 8:00 to 16:00 expects 60 by now, over the whole day 46.
    const [scheduled, allDay] = await start([
      campaign({
        title: 'Office',
        pacing: 'even',
        caps: { impressionsDaily: 80 },
        schedule: { mon: [[8, 16]] },
      }),
      campaign({ title: 'All day', pacing: 'even', caps: { impressionsDaily: 80 } }),
    ]);
    now = Date.parse('2026-06-01T14:00:00Z');
    await impressions(scheduled, 50);
    await impressions(allDay, 50);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([scheduled]);
    expect(await whyCodes(scheduled)).toEqual([]);
    const why = (await t.admin('GET', `/campaigns/${allDay}/why`)).json().data.reasons;
    expect(why).toEqual([
      expect.objectContaining({
        code: 'pacing_ahead',
        message: expect.stringContaining('50 of 46 planned by now'),
      }),
    ]);
  });

  it('paces an even campaign with a daily budget and no cap by its spend: held when ahead, served again as the plan moves on', async () => {
    // A daily budget of 1.00 at a CPM of 10.00 (10,000 micros an impression): at noon with no
    // traffic history (a flat plan) 500,000 micros are planned by now.
    const price = { model: 'cpm', amountMicros: 10_000_000 };
    const [even, asap] = await start([
      campaign({ title: 'Even', pacing: 'even', price, budget: { dailyMicros: 1_000_000 } }),
      campaign({ title: 'Asap', price, budget: { dailyMicros: 1_000_000 } }),
    ]);
    await t.services.pacing.step();
    expect((await fetched()).sort()).toEqual([even, asap].sort());

    // 55 impressions spend 550,000 micros: ahead of the plan, held; the same spend asap is not.
    await impressions(even, 55);
    await impressions(asap, 55);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([asap]);
    const why = (await t.admin('GET', `/campaigns/${even}/why`)).json().data.reasons;
    expect(why).toMatchObject([{ code: 'pacing_ahead' }]);
    expect(why[0].message).toMatch(
      /^Held by pacing: 550,000 micros spent of 500,000 planned by now \(its budget is 1,000,000\)/,
    );
    // The campaigns list says so in the currency.
    const operator = await signedInPerson(t, now, {
      email: 'pacing@example.com',
      account: 'operator',
      role: 'manager',
    });
    const list = await operator.get('/campaigns');
    expect(list.body).toContain('Even pacing: ahead of plan (0.55 USD spent, 0.50 planned by now)');

    now += 6 * HOUR; // 18:00: the plan is at 750,000 micros
    await t.services.pacing.step();
    expect((await fetched()).sort()).toEqual([even, asap].sort());
    expect(await whyCodes(even)).toEqual([]);
  });

  it('serves a campaign that has delivered exactly what its plan asks by now: it is held only ahead of the next step', async () => {
    // At noon with no traffic history (a flat plan), a daily cap of 2,400 plans 1,200 by now and
    // a little more by the end of the next step.
    const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 2400 } })]);
    const delivered = async (impressions: number) => {
      await t.store.db.deleteFrom('campaign_counters').where('campaign_id', '=', id).execute();
      await t.store.db
        .insertInto('campaign_counters')
        .values({ campaign_id: id, day: '2026-06-01', impressions, clicks: 0 })
        .execute();
      await t.services.pacing.step();
    };
    await delivered(1200);
    expect(await fetched()).toEqual([id]);
    await delivered(1201);
    expect(await fetched()).toEqual([]);
  });

  it('plans by the traffic its placements had at each hour of the last week', async () => {
    const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 1000 } })]);
    // Yesterday, the placement's traffic all came between 20:00 and 21:00: the plan expects almost
    // nothing before 20:00, so by noon even a few impressions are ahead of it.
    const yesterdayAt20 = Date.parse('2026-05-31T20:00:00Z');
    await pastImpressions(id, yesterdayAt20, 10_000);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([id]);
    await impressions(id, 5);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([]);
    // With a flat plan (no history) 5 of 1,000 by noon would be far behind: served.
  });

  it('stops pacing a campaign made asap at the next step', async () => {
    const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 10 } })]);
    await impressions(id, 8);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([]);
    expect((await t.admin('PATCH', `/campaigns/${id}`, { pacing: 'asap' })).statusCode).toBe(200);
    await t.state.refresh();
    await t.services.pacing.step();
    expect(await fetched()).toEqual([id]);
  });

  it('explains a hold with the plan the pacing job serves by, not one learnt again', async () => {
    // At noon with no history the job plans flat: 50 of 100 by now, and 55 delivered are held.
    const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 100 } })]);
    await t.services.pacing.step();
    await impressions(id, 55);
    await t.services.pacing.step();
    // Yesterday's traffic, all in the morning, appears: a plan learnt from it now would expect
    // nearly the whole cap by noon. The job goes on with the traffic it learnt until the hour is up.
    const yesterdayMorning = Date.parse('2026-05-31T06:00:00Z');
    await pastImpressions(id, yesterdayMorning, 60_000);
    await t.services.pacing.step();
    expect(await fetched()).toEqual([]);
    const res = await t.admin('GET', `/campaigns/${id}/why?placement=header_banner`);
    const why = res.json().data;
    expect(why).toMatchObject({ eligible: false, chance: null });
    expect(why.reasons).toEqual([
      {
        code: 'pacing_ahead',
        message: expect.stringMatching(
          /^Held by pacing: 55 of 50 planned by now \(its cap is 100\), released at 2026-06-01T13:1\d:\d\d/,
        ),
      },
    ]);
  });

  it('starts a campaign on a placement with no traffic known at a small chance, or at the operator’s prior', async () => {
    const chanceAfterAStep = async (prior: number) => {
      const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 8640 } })], prior);
      await t.services.pacing.step();
      // The chance the index draws it at (the pace the job applied to the serving state).
      const { chance } = t.state.paceOf(id);
      await t.close();
      return chance;
    };
    // No prior: 1 in 1,000, which doubles at each step it stays behind (domain/pacing.test.ts).
    expect(await chanceAfterAStep(0)).toBe(0.001);
    // At noon a flat plan of 8,640 a day allows 4,321 by the end of the step (4,320 behind, and one
    // impression a 10-second step); a prior of 15,555,600 fetches an hour is 43,210 a step.
    expect(await chanceAfterAStep(15_555_600)).toBeCloseTo(0.1, 6);
    t = await createTestApp({ engine });
  });

  it('serves an even campaign no pacing step has decided yet at the small starting chance, not at every fetch', async () => {
    const [even, asap] = await start([
      campaign({ title: 'Even', pacing: 'even', caps: { impressionsDaily: 1000 } }),
      campaign({ title: 'Asap', priority: 1 }),
    ]);
    expect(t.state.paceOf(even).chance).toBe(START_CHANCE);
    expect(t.state.paceOf(asap)).toEqual(UNPACED);
    let returned = 0;
    for (let i = 0; i < 100; i++) if ((await fetched()).includes(even)) returned++;
    // 1 in 1,000: none of 100 fetches, or one or two by chance (at every fetch: all 100).
    expect(returned).toBeLessThanOrEqual(2);
    // The step decides: with the operator's prior of one fetch an hour, every fetch that can.
    await t.services.pacing.step();
    expect(t.state.paceOf(even).chance).toBe(1);
    expect((await fetched()).sort()).toEqual([even, asap].sort());
  });

  it('never expects fewer fetches than its placements had impressions in the last minutes', async () => {
    // A cap of 2 a day at noon: its flat plan allows 1.00023 by the end of the step. The prior (one
    // fetch an hour) would draw it at every fetch; another campaign's 200 impressions over the five
    // minutes before noon say the placement has at least 6.67 fetches a step.
    const [id, other] = await start([
      campaign({ pacing: 'even', caps: { impressionsDaily: 2 } }),
      campaign({ title: 'Beneath', priority: 1 }),
    ]);
    await pastImpressions(other, now - 5 * 60_000, 1500);
    await t.services.pacing.step();
    expect(t.state.paceOf(id).chance).toBeCloseTo((1 + (2 * 10) / 86_400) / (200 / 30), 9);
  });
});
