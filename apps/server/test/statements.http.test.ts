import { afterEach, describe, expect, it } from 'vitest';
import type { TrackedEvent } from '../src/store/store.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

const SEPTEMBER = Date.parse('2026-09-20T12:00:00Z');
const OCTOBER = Date.parse('2026-10-10T12:00:00Z');

/**
 * Monthly statements (D18) through the management API, on a store whose events are dated by the
 * test: September and October 2026 (UTC billing months), issued from November and December. Two
 * advertisers (Northwind at a CPM of 2.50, Contoso at a CPC of 1.00) and two partners (the test
 * partner on 70%, Daily Planet on 50%).
 */
describe.each(ENGINES)('statements on %s', (engine) => {
  let t: TestApp;
  let now = Date.parse('2026-11-05T12:00:00Z');
  afterEach(async () => {
    await t?.close();
    now = Date.parse('2026-11-05T12:00:00Z');
  });

  async function seed(options: { minimumPayoutMicros?: number } = {}) {
    t = await createTestApp({ engine, clock: () => now, ...options });
    const [cpm] = await t.addCampaigns([campaign({ title: 'Winter boots' })], 'Northwind');
    const [cpc] = await t.addCampaigns([campaign({ title: 'Kettles' })], 'Contoso');
    await setCampaignPrice(t.store, cpm, { model: 'cpm', amountMicros: 2_500_000, since: 0 });
    await setCampaignPrice(t.store, cpc, { model: 'cpc', amountMicros: 1_000_000, since: 0 });
    const own = await t.partners.findPartner('Test Partner');
    const a = { partnerId: own.id, apiKeyId: t.apiKeyId };
    const b = await newPartnerKey(t.store, 'Daily Planet', 'daily-planet');
    await t.store.addRevenueShare({
      partnerId: a.partnerId,
      effectiveFrom: 0,
      basisPoints: 7000,
      actor: 'test',
    });
    await t.store.addRevenueShare({
      partnerId: b.partnerId,
      effectiveFrom: 0,
      basisPoints: 5000,
      actor: 'test',
    });
    const event = (campaignId: number, at: number, fields: Partial<TrackedEvent>) =>
      trackedEvent({ ...a, campaignId, occurredAt: at, priced: true, ...fields });
    await t.store.insertEvents([event(cpm, SEPTEMBER, {}), event(cpm, SEPTEMBER + 1, {})]);
    await t.store.insertEvents([
      ...[0, 1, 2].map((i) => event(cpm, OCTOBER + i, {})),
      event(cpm, OCTOBER + 3, b),
      event(cpm, OCTOBER + 4, { verdict: 'invalid', reason: 'bot user agent' }),
      event(cpc, OCTOBER + 5, { ...b, kind: 'click' }),
      event(cpc, OCTOBER + 6, { ...b, kind: 'click' }),
    ]);
    const advertisers = await t.store.listAdvertisers();
    const id = (name: string) => advertisers.find((advertiser) => advertiser.name === name)!.id;
    return { cpm: cpm, cpc: cpc, a, b, northwind: id('Northwind'), contoso: id('Contoso') };
  }

  const issue = (month: string, token?: string) => t.admin('POST', '/statements', { month }, token);
  const issued = async (month: string) => {
    const res = await issue(month);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; kind: string; accountId: number }[];
  };
  const statement = async (id: number, token?: string) => {
    const res = await t.admin('GET', `/statements/${id}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const find = (list: { id: number; kind: string; accountId: number }[], kind: string, accountId: number) =>
    list.find((entry) => entry.kind === kind && entry.accountId === accountId)!.id;
  const scoped = async (account: string) =>
    (await t.services.tokens.create({ label: account, account, role: 'admin' })).plaintext;

  /** The month's spend by campaign and earnings by partner, summed from the raw events. */
  async function eventSums(from: string, to: string) {
    const rows = await t.store.db
      .selectFrom('events')
      .select(['campaign_id', 'partner_id', 'cost_micros', 'earnings_micros'])
      .where('occurred_at', '>=', Date.parse(from))
      .where('occurred_at', '<', Date.parse(to))
      .execute();
    const add = (map: Map<number, number>, key: number | string, value: number | string) =>
      map.set(Number(key), (map.get(Number(key)) ?? 0) + Number(value));
    const spend = new Map<number, number>();
    const earnings = new Map<number, number>();
    for (const row of rows) {
      add(spend, row.campaign_id, row.cost_micros);
      add(earnings, row.partner_id, row.earnings_micros);
    }
    return { spend, earnings };
  }

  it('issues closed months in order, each once, with lines and totals that agree with the events', async () => {
    const { cpm, cpc, a, b, northwind, contoso } = await seed();
    const months = await t.admin('GET', '/statement-months');
    expect(months.json().data).toEqual([
      { month: '2026-09', closed: true, issued: false, nextToIssue: true },
      { month: '2026-10', closed: true, issued: false, nextToIssue: false },
      { month: '2026-11', closed: false, issued: false, nextToIssue: false },
    ]);
    const early = await issue('2026-10');
    expect(early.statusCode, early.body).toBe(409);
    expect(early.json().message).toBe(
      'issue 2026-09 first: months are issued in order, each after the one before it',
    );
    const open = await issue('2026-11');
    expect(open.statusCode, open.body).toBe(409);
    expect(open.json().message).toMatch(/^2026-11 has not closed: it ends at 2026-12-01T00:00:00.000Z/);

    const september = await issued('2026-09');
    expect(september.map((s) => [s.kind, s.accountId])).toEqual([
      ['advertiser', northwind],
      ['partner', a.partnerId],
    ]);
    const again = await issue('2026-09');
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json()).toMatchObject({
      code: 'already_done',
      message: 'the statements of 2026-09 were issued already',
    });

    const october = await issued('2026-10');
    const sums = await eventSums('2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z');
    const boots = await statement(find(october, 'advertiser', northwind));
    expect(boots).toMatchObject({
      kind: 'advertiser',
      accountName: 'Northwind',
      month: '2026-10',
      periodStart: '2026-10-01T00:00:00.000Z',
      periodEnd: '2026-11-01T00:00:00.000Z',
      currency: 'USD',
      subtotalMicros: 10_000,
      adjustmentsMicros: 0,
      openingBalanceMicros: 0,
      totalMicros: 10_000,
      payableMicros: 10_000,
      carriedForwardMicros: 0,
      payment: null,
    });
    expect(boots.subtotalMicros).toBe(sums.spend.get(cpm));
    expect(boots.lines).toEqual([
      {
        kind: 'campaign',
        campaignId: cpm,
        campaignName: 'Winter boots',
        placementId: null,
        apiKeyId: null,
        apiKeyName: null,
        impressions: 4,
        clicks: 0,
        invalidImpressions: 1,
        invalidClicks: 0,
        amountMicros: 10_000,
        adjustmentId: null,
        reason: null,
      },
    ]);
    expect((await statement(find(october, 'advertiser', contoso))).subtotalMicros).toBe(sums.spend.get(cpc));
    const own = await statement(find(october, 'partner', a.partnerId));
    // 70% of the 12,500 micros of five impressions since September, less the 3,500 earned then.
    expect(own.subtotalMicros).toBe(5_250);
    expect(own.subtotalMicros).toBe(sums.earnings.get(a.partnerId));
    expect(own.lines).toMatchObject([
      {
        kind: 'placement_key',
        placementId: 'header_banner',
        apiKeyId: a.apiKeyId,
        impressions: 3,
        invalidImpressions: 1,
      },
    ]);
    const planet = await statement(find(october, 'partner', b.partnerId));
    expect(planet.subtotalMicros).toBe(1_001_250);
    expect(planet.subtotalMicros).toBe(sums.earnings.get(b.partnerId));
    expect(planet.lines).toMatchObject([
      { apiKeyId: b.apiKeyId, apiKeyName: 'p', impressions: 1, clicks: 2 },
    ]);

    // A later price and share change leave the statement and the month's report as they were.
    const report = async () =>
      (await t.admin('GET', `/reports?campaign=${cpm}&from=2026-10-01&to=2026-10-31`)).json().data.totals;
    const reportBefore = await report();
    now = Date.parse('2026-11-10T12:00:00Z');
    await setCampaignPrice(t.store, cpm, { model: 'cpm', amountMicros: 9_000_000, since: now });
    await t.store.addRevenueShare({
      partnerId: a.partnerId,
      effectiveFrom: now,
      basisPoints: 1000,
      actor: 'test',
    });
    await t.store.insertEvents([trackedEvent({ ...a, campaignId: cpm, occurredAt: now, priced: true })]);
    expect(await statement(boots.id)).toEqual(boots);
    expect(await statement(own.id)).toEqual(own);
    expect(await report()).toEqual(reportBefore);
    expect(reportBefore.spendMicros).toBe(10_000);

    const listed = await t.admin('GET', `/statements?month=2026-10&kind=partner`);
    expect(listed.json().data.map((s: { accountId: number }) => s.accountId)).toEqual([
      a.partnerId,
      b.partnerId,
    ]);
    const audit = (await t.admin('GET', '/audit?objectType=statement')).json().data;
    expect(
      audit.map((entry: { objectId: string; action: string }) => [entry.objectId, entry.action]),
    ).toEqual([
      ['2026-09', 'issue_statements'],
      ['2026-10', 'issue_statements'],
    ]);
  });

  it('gives a statement as CSV: a header, its lines, then its totals in units of the currency', async () => {
    const { northwind } = await seed();
    await issued('2026-09');
    const october = await issued('2026-10');
    const id = find(october, 'advertiser', northwind);
    const res = await t.request({
      method: 'GET',
      url: `/admin/v1/statements/${id}`,
      headers: { authorization: `Bearer ${t.adminToken}`, accept: 'text/csv' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="placard-statement-${id}.csv"`);
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe(
      'statement,month,line,campaign,campaignName,placement,apiKey,apiKeyName,adjustment,reason,impressions,clicks,invalidImpressions,invalidClicks,amount,currency',
    );
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${id},2026-10,campaign,\\d+,Winter boots,,,,,,4,0,1,0,0.01,USD$`)),
      `${id},2026-10,subtotal,,,,,,,,,,,,0.01,USD`,
      `${id},2026-10,adjustments,,,,,,,,,,,,0.00,USD`,
      `${id},2026-10,openingBalance,,,,,,,,,,,,0.00,USD`,
      `${id},2026-10,total,,,,,,,,,,,,0.01,USD`,
      `${id},2026-10,payable,,,,,,,,,,,,0.01,USD`,
      `${id},2026-10,carriedForward,,,,,,,,,,,,0.00,USD`,
      '',
    ]);
    expect((await t.admin('GET', `/statements/${id}?format=csv`)).body).toBe(res.body);
  });

  it('never changes an issued statement: no route does, and the store refuses SQL that would', async () => {
    const { a } = await seed();
    const [sepNorthwind, sepOwn] = await issued('2026-09');
    await t.admin('POST', '/adjustments', {
      kind: 'partner',
      accountId: a.partnerId,
      amountMicros: 5,
      reason: 'x',
    });
    expect((await t.admin('PATCH', `/statements/${sepNorthwind.id}`, { totalMicros: 0 })).statusCode).toBe(
      404,
    );
    expect((await t.admin('DELETE', `/statements/${sepNorthwind.id}`)).statusCode).toBe(404);
    const refused = /issued statements never change \(D18\)/;
    const db = t.store.db;
    await expect(db.updateTable('statements').set({ total_micros: 0 }).execute()).rejects.toThrow(refused);
    await expect(db.deleteFrom('statements').execute()).rejects.toThrow(refused);
    await expect(db.updateTable('statement_lines').set({ amount_micros: 0 }).execute()).rejects.toThrow(
      refused,
    );
    await expect(db.deleteFrom('statement_lines').execute()).rejects.toThrow(refused);
    await expect(db.deleteFrom('statement_months').execute()).rejects.toThrow(refused);
    await expect(db.updateTable('statement_adjustments').set({ amount_micros: 0 }).execute()).rejects.toThrow(
      refused,
    );
    await expect(
      t.store.transaction((tx) => tx.db.deleteFrom('statement_adjustments').execute()),
    ).rejects.toThrow(refused);
    expect((await statement(sepOwn.id)).subtotalMicros).toBe(3_500);
    expect(await t.store.listAdjustments({})).toHaveLength(1);
  });

  it('carries an adjustment once, holds a balance below the minimum payout, and pays it once it is reached', async () => {
    const { a, contoso } = await seed({ minimumPayoutMicros: 6_000 });
    const september = await issued('2026-09');
    const sepOwn = await statement(find(september, 'partner', a.partnerId));
    // 3,500 micros earned, below the minimum of 6,000: nothing payable, all of it carried forward.
    expect(sepOwn).toMatchObject({
      subtotalMicros: 3_500,
      totalMicros: 3_500,
      payableMicros: 0,
      carriedForwardMicros: 3_500,
    });
    const unpaid = await t.admin('POST', `/statements/${sepOwn.id}/payment`, { reference: 'TRX-0' });
    expect(unpaid.statusCode, unpaid.body).toBe(409);
    expect(unpaid.json().message).toMatch(/has nothing payable/);

    const credit = await t.admin('POST', '/adjustments', {
      kind: 'partner',
      accountId: a.partnerId,
      amountMicros: -1_000,
      reason: 'Refund of September bot traffic',
    });
    expect(credit.statusCode, credit.body).toBe(201);
    expect(credit.json().data).toMatchObject({
      kind: 'partner',
      accountName: 'Test Partner',
      amountMicros: -1_000,
      carriedOnStatementId: null,
    });
    const october = await issued('2026-10');
    const octOwn = await statement(find(october, 'partner', a.partnerId));
    // 5,250 earned, less 1,000, plus the 3,500 carried: 7,750, past the minimum, all payable.
    expect(octOwn).toMatchObject({
      subtotalMicros: 5_250,
      adjustmentsMicros: -1_000,
      openingBalanceMicros: 3_500,
      totalMicros: 7_750,
      payableMicros: 7_750,
      carriedForwardMicros: 0,
    });
    expect(octOwn.lines.at(-1)).toMatchObject({
      kind: 'adjustment',
      adjustmentId: credit.json().data.id,
      reason: 'Refund of September bot traffic',
      amountMicros: -1_000,
    });

    const paid = await t.admin('POST', `/statements/${octOwn.id}/payment`, { reference: 'TRX-1' });
    expect(paid.statusCode, paid.body).toBe(201);
    expect(paid.json().data.payment).toMatchObject({
      reference: 'TRX-1',
      paidBy: expect.stringMatching(/^admin:/),
    });
    const twice = await t.admin('POST', `/statements/${octOwn.id}/payment`, { reference: 'TRX-2' });
    expect(twice.statusCode, twice.body).toBe(409);
    expect(twice.json().code).toBe('already_done');
    expect((await statement(octOwn.id)).payment.reference).toBe('TRX-1');
    const advertiserPaid = await t.admin(
      'POST',
      `/statements/${find(october, 'advertiser', contoso)}/payment`,
      {
        reference: 'TRX-3',
      },
    );
    expect(advertiserPaid.statusCode, advertiserPaid.body).toBe(409);

    // An adjustment after October's issue waits for the account's next statement, November's; the
    // partner's credit, carried on October's, is not carried again.
    const charge = await t.admin('POST', '/adjustments', {
      kind: 'advertiser',
      accountId: contoso,
      amountMicros: 500,
      reason: 'Late creative fee',
    });
    now = Date.parse('2026-12-02T00:00:00Z');
    const november = await issued('2026-11');
    expect(november.map((s) => [s.kind, s.accountId])).toEqual([['advertiser', contoso]]);
    expect(await statement(november[0].id)).toMatchObject({
      subtotalMicros: 0,
      adjustmentsMicros: 500,
      totalMicros: 500,
    });
    const adjustments = (await t.admin('GET', '/adjustments')).json().data;
    expect(
      adjustments.map((x: { id: number; carriedOnStatementId: number }) => [x.id, x.carriedOnStatementId]),
    ).toEqual([
      [credit.json().data.id, octOwn.id],
      [charge.json().data.id, november[0].id],
    ]);
    const trail = (await t.admin('GET', '/audit'))
      .json()
      .data.map((entry: { action: string }) => entry.action);
    expect(trail.filter((action: string) => ['add_adjustment', 'mark_paid'].includes(action))).toEqual([
      'add_adjustment',
      'mark_paid',
      'add_adjustment',
    ]);
  });

  it.each([
    [{ kind: 'partner', accountId: 1, amountMicros: 0, reason: 'none' }, 'amountMicros'],
    [{ kind: 'partner', accountId: 1, amountMicros: 1.5, reason: 'half' }, 'amountMicros'],
    [{ kind: 'operator', accountId: 1, amountMicros: 5, reason: 'who' }, 'kind'],
    [{ kind: 'partner', accountId: 1, amountMicros: 5, reason: ' ' }, 'reason'],
  ])('refuses the adjustment %j naming %s', async (body, field) => {
    await seed();
    const res = await t.admin('POST', '/adjustments', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().problems.map((problem: { field: string }) => problem.field)).toEqual([field]);
    expect(await t.store.listAdjustments({})).toEqual([]);
  });

  it('lets an advertiser or a partner read only its own statements and adjustments, and change none', async () => {
    const { a, b, northwind, contoso } = await seed();
    await issued('2026-09');
    const october = await issued('2026-10');
    await t.admin('POST', '/adjustments', {
      kind: 'partner',
      accountId: a.partnerId,
      amountMicros: 7,
      reason: 'a',
    });
    await t.admin('POST', '/adjustments', {
      kind: 'partner',
      accountId: b.partnerId,
      amountMicros: 9,
      reason: 'b',
    });
    const boots = await scoped(`advertiser:${northwind}`);
    const mine = (await t.admin('GET', '/statements', undefined, boots)).json().data;
    expect(mine.map((s: { kind: string; accountId: number }) => [s.kind, s.accountId])).toEqual([
      ['advertiser', northwind],
      ['advertiser', northwind],
    ]);
    expect(
      (await t.admin('GET', `/statements?kind=advertiser&accountId=${contoso}`, undefined, boots)).json()
        .data,
    ).toEqual([]);
    const other = await t.admin(
      'GET',
      `/statements/${find(october, 'advertiser', contoso)}`,
      undefined,
      boots,
    );
    expect(other.statusCode, other.body).toBe(404);
    expect(
      (await t.admin('GET', `/statements/${find(october, 'partner', a.partnerId)}`, undefined, boots))
        .statusCode,
    ).toBe(404);
    await statement(find(october, 'advertiser', northwind), boots);
    const refused = await issue('2026-11', boots);
    expect(refused.statusCode, refused.body).toBe(403);

    const planet = await scoped(`partner:${b.partnerId}`);
    const theirs = (await t.admin('GET', '/statements', undefined, planet)).json().data;
    expect(theirs.map((s: { accountId: number }) => s.accountId)).toEqual([b.partnerId]);
    expect(
      (await t.admin('GET', `/statements/${find(october, 'partner', a.partnerId)}`, undefined, planet))
        .statusCode,
    ).toBe(404);
    const adjustments = (await t.admin('GET', '/adjustments', undefined, planet)).json().data;
    expect(adjustments.map((x: { amountMicros: number }) => x.amountMicros)).toEqual([9]);
    const add = await t.admin(
      'POST',
      '/adjustments',
      { kind: 'partner', accountId: b.partnerId, amountMicros: 1, reason: 'me' },
      planet,
    );
    expect(add.statusCode, add.body).toBe(403);
    const pay = await t.admin(
      'POST',
      `/statements/${find(october, 'partner', b.partnerId)}/payment`,
      { reference: 'x' },
      planet,
    );
    expect(pay.statusCode, pay.body).toBe(403);
  });

  it('refuses a month whose raw events no longer agree with their rollups, naming why', async () => {
    const { cpm } = await seed();
    await issued('2026-09');
    // Retention's work: October's raw events removed, their rollups kept.
    await t.store.db
      .deleteFrom('events')
      .where('campaign_id', '=', cpm)
      .where('occurred_at', '>=', OCTOBER)
      .execute();
    const res = await issue('2026-10');
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().message).toMatch(
      /^the statements of 2026-10 are not issued: its raw events and their per-minute rollups disagree \(campaign \d+, partner \d+: events 0 .*removed by retention \(PLACARD_EVENT_RETENTION_DAYS\)$/,
    );
    expect(await t.store.listStatements({ month: '2026-10' })).toEqual([]);
    expect(await t.store.issuedMonths()).toEqual(['2026-09']);
  });
});
