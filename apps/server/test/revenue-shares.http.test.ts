import { afterEach, describe, expect, it } from 'vitest';
import { revenueShareCumulative, micros } from '../src/domain/money.js';
import { createTestApp, campaign, expectTracked, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const DAY = 86_400_000;
/** The UTC date `days` from now: two days ahead is a later day in every time zone. */
const utcDate = (days: number, from = Date.now()) => new Date(from + days * DAY).toISOString().slice(0, 10);

/**
 * Partners' revenue shares (D18) through the management API: the operator sets one from today or a
 * later billing date, audited; partners read their own; a past date is refused, since each charged
 * event's earnings are fixed when it is stored; and events charged after a share is set earn it.
 */
describe.each(ENGINES)('revenue shares on %s', (engine) => {
  let t: TestApp;
  afterEach(() => t?.close());

  const partnerId = async () => (await t.partners.findPartner('Test Partner')).id;
  const scoped = async (account: string, role: string) =>
    (await t.services.tokens.create({ label: `${account} ${role}`, account, role })).plaintext;

  it('sets a share from a date, lists it newest first with its percentage, and audits who set it', async () => {
    t = await createTestApp({ engine });
    const id = await partnerId();
    const empty = await t.admin('GET', `/partners/${id}/revenue-shares`);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toEqual({ status: 'success', data: [] });

    const later = utcDate(30);
    const first = await t.admin('POST', `/partners/${id}/revenue-shares`, {
      basisPoints: 7005,
      effectiveDate: utcDate(2),
    });
    expect(first.statusCode, first.body).toBe(201);
    const tokenId = (await t.services.tokens.list()).find((token) => token.label === 'tests')!.id;
    expect(first.json().data).toEqual({
      id: expect.any(Number),
      basisPoints: 7005,
      percent: '70.05',
      effectiveFrom: `${utcDate(2)}T00:00:00.000Z`,
      effectiveDate: utcDate(2),
      setBy: `admin:${tokenId}`,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    const second = await t.admin('POST', `/partners/${id}/revenue-shares`, {
      basisPoints: 5000,
      effectiveDate: later,
    });
    expect(second.statusCode, second.body).toBe(201);

    const listed = (await t.admin('GET', `/partners/${id}/revenue-shares`)).json().data;
    expect(
      listed.map((share: { percent: string; effectiveDate: string }) => [share.percent, share.effectiveDate]),
    ).toEqual([
      ['50.00', later],
      ['70.05', utcDate(2)],
    ]);

    const trail = (await t.admin('GET', `/audit?objectType=partner&objectId=${id}`)).json().data;
    const entries = trail.filter((entry: { action: string }) => entry.action === 'set_revenue_share');
    expect(entries).toHaveLength(2);
    const entryOf = (basisPoints: number) =>
      entries.find(
        (entry: { after: { revenueShare: { basisPoints: number } } }) =>
          entry.after.revenueShare.basisPoints === basisPoints,
      );
    expect(entryOf(7005)).toMatchObject({
      actor: `admin:${tokenId}`,
      before: { revenueShare: null },
      after: { revenueShare: { basisPoints: 7005, percent: '70.05', effectiveDate: utcDate(2) } },
    });
    // The 50% share replaces, from its date, the 70.05% that would be in force then.
    expect(entryOf(5000)).toMatchObject({
      actor: `admin:${tokenId}`,
      before: { revenueShare: { basisPoints: 7005, effectiveDate: utcDate(2) } },
      after: { revenueShare: { basisPoints: 5000, effectiveDate: later } },
    });
  });

  it('refuses a date before today in the billing time zone, and takes today from now', async () => {
    // 12:00 UTC: already the next day at UTC+14 (Kiritimati), so that day is "today" there.
    const now = Date.parse('2026-11-27T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now, billingTimeZone: 'Pacific/Kiritimati' });
    const id = await partnerId();
    const past = await t.admin('POST', `/partners/${id}/revenue-shares`, {
      basisPoints: 7000,
      effectiveDate: '2026-11-27',
    });
    expect(past.statusCode, past.body).toBe(422);
    expect(past.json()).toMatchObject({
      code: 'unprocessable',
      problems: [
        {
          field: 'effectiveDate',
          message:
            'must be today (2026-11-28, Pacific/Kiritimati) or later: earnings already made never change',
        },
      ],
    });
    const today = await t.admin('POST', `/partners/${id}/revenue-shares`, {
      basisPoints: 7000,
      effectiveDate: '2026-11-28',
    });
    expect(today.statusCode, today.body).toBe(201);
    expect(today.json().data).toMatchObject({
      effectiveFrom: new Date(now).toISOString(),
      effectiveDate: '2026-11-28',
    });
    // A later day starts at its midnight there: 2026-11-30T00:00+14:00.
    const later = await t.admin('POST', `/partners/${id}/revenue-shares`, {
      basisPoints: 6000,
      effectiveDate: '2026-11-30',
    });
    expect(later.json().data.effectiveFrom).toBe('2026-11-29T10:00:00.000Z');
    expect(await t.store.listRevenueShares(id)).toHaveLength(2);
  });

  it.each([
    [{ basisPoints: 10_001, effectiveDate: '2099-01-01' }, 'basisPoints'],
    [{ basisPoints: -1, effectiveDate: '2099-01-01' }, 'basisPoints'],
    [{ basisPoints: 70.5, effectiveDate: '2099-01-01' }, 'basisPoints'],
    [{ effectiveDate: '2099-01-01' }, 'basisPoints'],
    [{ basisPoints: 7000, effectiveDate: '2099-02-30' }, 'effectiveDate'],
    [{ basisPoints: 7000, effectiveDate: '01/02/2099' }, 'effectiveDate'],
    [{ basisPoints: 7000 }, 'effectiveDate'],
  ])('refuses %j with 400 naming %s, and sets nothing', async (body, field) => {
    t = await createTestApp({ engine });
    const id = await partnerId();
    const answer = await t.admin('POST', `/partners/${id}/revenue-shares`, body);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json().problems.map((problem: { field: string }) => problem.field)).toEqual([field]);
    expect(await t.store.listRevenueShares(id)).toEqual([]);
  });

  it('lets the partner’s own tokens read its shares but set none, and hides another partner’s', async () => {
    t = await createTestApp({ engine });
    const id = await partnerId();
    const other = (await t.partners.createPartner('Other Partner')).id;
    const set = { basisPoints: 7000, effectiveDate: utcDate(2) };
    expect((await t.admin('POST', `/partners/${id}/revenue-shares`, set)).statusCode).toBe(201);
    const own = await scoped(`partner:${id}`, 'admin');
    const read = await t.admin('GET', `/partners/${id}/revenue-shares`, undefined, own);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().data.map((share: { percent: string }) => share.percent)).toEqual(['70.00']);
    const refused = await t.admin(
      'POST',
      `/partners/${id}/revenue-shares`,
      { ...set, basisPoints: 10_000 },
      own,
    );
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().message).toBe("only the operator may set a partner's revenue share");
    expect((await t.admin('GET', `/partners/${other}/revenue-shares`, undefined, own)).statusCode).toBe(404);
    const reporter = await scoped('operator', 'reporter');
    expect((await t.admin('POST', `/partners/${id}/revenue-shares`, set, reporter)).statusCode).toBe(403);
    expect(await t.store.listRevenueShares(id)).toHaveLength(1);
  });

  it('makes the events charged after a share is set earn it, and a later-dated share waits for its day', async () => {
    t = await createTestApp({ engine });
    const id = await partnerId();
    const [campaignId] = await t.addCampaigns([campaign({ title: 'Priced' })]);
    const cpm = 2_500_001;
    // The price as the price change sets it: its columns and a row of its history.
    await t.store.db
      .updateTable('campaigns')
      .set({ price_model: 'cpm', price_micros: cpm })
      .where('id', '=', campaignId)
      .execute();
    await t.store.db
      .insertInto('campaign_prices')
      .values({
        campaign_id: campaignId,
        since: Date.now() - DAY,
        model: 'cpm',
        amount_micros: cpm,
        actor: 'test',
      })
      .execute();
    await t.state.refresh();
    const track = async () =>
      expectTracked(await t.track('impression', { campaignId, placement: 'header_banner' }), 'impression');
    const earnings = async () =>
      (
        await t.store.db
          .selectFrom('events')
          .select(['cost_micros', 'earnings_micros'])
          .where('campaign_id', '=', campaignId)
          .orderBy('id')
          .execute()
      ).map((row) => [Number(row.cost_micros), Number(row.earnings_micros)]);

    await track();
    const before = await earnings();
    expect(before).toEqual([[2500, 0]]);

    const today = new Date().toISOString().slice(0, 10);
    expect(
      (await t.admin('POST', `/partners/${id}/revenue-shares`, { basisPoints: 7000, effectiveDate: today }))
        .statusCode,
    ).toBe(201);
    expect(
      (
        await t.admin('POST', `/partners/${id}/revenue-shares`, {
          basisPoints: 1000,
          effectiveDate: utcDate(2),
        })
      ).statusCode,
    ).toBe(201);
    for (let i = 0; i < 4; i++) await track();
    const after = await earnings();
    // The event charged before the share keeps earning nothing; the next four earn 70% of their
    // spend together, to the micro, and the 10% of the day after tomorrow does not apply yet.
    expect(after[0]).toEqual([2500, 0]);
    const spend = micros(after.slice(1).reduce((sum, [cost]) => sum + cost, 0));
    expect(after.slice(1).reduce((sum, [, earned]) => sum + earned, 0)).toBe(
      revenueShareCumulative(7000, spend),
    );
    expect(after.slice(1).every(([cost, earned]) => earned > 0 && earned < cost)).toBe(true);
  });
});
