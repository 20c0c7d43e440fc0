import { afterEach, describe, expect, it } from 'vitest';
import { PACING_NEEDS_CAP_MESSAGE } from '../src/domain/pacing.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

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

  async function start(campaigns: unknown[]): Promise<number[]> {
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
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
  const whyCodes = async (id: number): Promise<string[]> => {
    const res = await t.admin('GET', `/campaigns/${id}/why`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data.reasons as Array<{ code: string }>).map((reason) => reason.code);
  };

  it('takes pacing on the management API: asap by default, even only with a cap it can spread', async () => {
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

  it('plans by the traffic its placements had at each hour of the last week', async () => {
    const [id] = await start([campaign({ pacing: 'even', caps: { impressionsDaily: 1000 } })]);
    // Yesterday, the placement's traffic all came between 20:00 and 21:00: the plan expects almost
    // nothing before 20:00, so by noon even a few impressions are ahead of it.
    const yesterdayAt20 = Date.parse('2026-05-31T20:00:00Z');
    await t.store.insertEvents(
      Array.from({ length: 200 }, (_, i) => ({
        kind: 'impression' as const,
        campaignId: id,
        placement: 'header_banner',
        country: null,
        device: null,
        partnerId: 1,
        apiKeyId: t.apiKeyId,
        occurredAt: yesterdayAt20 + i * 10_000,
        verdict: 'counted' as const,
        reason: null,
        idempotencyKey: null,
        userAddress: null,
        mayHitCap: false,
      })),
    );
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
});
