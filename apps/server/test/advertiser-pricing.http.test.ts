import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, expectTracked, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const cpm = (units: number) => ({ model: 'cpm', amountMicros: units * 1_000_000 });
const NOT_ALLOWED =
  /^only the operator may set a campaign's price: the operator has not allowed advertiser "Pricing Ads" to set its campaigns' prices$/;

/**
 * Who sets an advertiser's campaigns' prices (D18), through the management API: the operator decides
 * for each advertiser (`pricing`, `operator` by default), on creation or later, audited. Allowed, the
 * advertiser's admins and managers set their own campaigns' prices like the operator: kept in the
 * prices with who set them, audited, applied to events from then on, under the same review rules as
 * their other edits. Not allowed, they get 403 naming why (before any allowing, in
 * campaign-prices.http.test.ts; here once withdrawn); priority and weight stay the operator's.
 */
describe.each(ENGINES)('advertisers pricing their own campaigns, on %s', (engine) => {
  let t: TestApp;
  let advertiserId = 0;
  let running = 0;
  let manager = '';
  beforeEach(async () => {
    t = await createTestApp({ engine });
    [running] = await t.addCampaigns([campaign({ title: 'Running' })], 'Pricing Ads');
    advertiserId = (await t.campaigns.get(running)).advertiserId;
    manager = await tokenOf('manager');
  });
  afterEach(() => t.close());

  const tokenOf = async (role: 'admin' | 'manager' | 'reporter') =>
    (await t.services.tokens.create({ label: role, account: `advertiser:${advertiserId}`, role })).plaintext;
  /** The id of the first token of `label` (its role), as the audit log and the prices name it. */
  const tokenIdOf = async (label: string) =>
    (await t.store.listAdminTokens()).find((token) => token.label === label)?.id;
  const allow = async (pricing: 'advertiser' | 'operator') => {
    const answer = await t.admin('PATCH', `/advertisers/${advertiserId}`, { pricing });
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json().data as Record<string, unknown>;
  };
  const history = async (id: number) =>
    (await t.admin('GET', `/campaigns/${id}/prices`)).json().data as Array<Record<string, unknown>>;

  it('is the operator’s to decide: operator by default, set on creation and later, shown and audited', async () => {
    const read = await t.admin('GET', `/advertisers/${advertiserId}`, undefined, manager);
    expect(read.json().data.pricing).toBe('operator');
    expect((await allow('advertiser'))['pricing']).toBe('advertiser');
    expect((await t.admin('GET', `/advertisers/${advertiserId}`)).json().data.pricing).toBe('advertiser');
    const listed = (await t.admin('GET', '/advertisers')).json().data as Array<Record<string, unknown>>;
    expect(listed.find((a) => a['id'] === advertiserId)?.['pricing']).toBe('advertiser');

    const created = await t.admin('POST', '/advertisers', { name: 'Self Priced', pricing: 'advertiser' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.pricing).toBe('advertiser');
    expect((await t.admin('POST', '/advertisers', { name: 'Default' })).json().data.pricing).toBe('operator');

    const bad = await t.admin('PATCH', `/advertisers/${advertiserId}`, { pricing: 'partner' });
    expect([400, 422], bad.body).toContain(bad.statusCode);
    expect(JSON.stringify(bad.json())).toContain('pricing');

    // The advertiser's own people may not decide it, but may send back what they read.
    const own = await t.admin('PATCH', `/advertisers/${advertiserId}`, { pricing: 'operator' }, manager);
    expect(own.statusCode, own.body).toBe(403);
    expect(own.json()).toMatchObject({
      code: 'forbidden',
      message: "only the operator may decide who sets an advertiser's campaign prices",
    });
    const echoed = await t.admin(
      'PATCH',
      `/advertisers/${advertiserId}`,
      { pricing: 'advertiser', budget: { totalMicros: 9_000_000 } },
      manager,
    );
    expect(echoed.statusCode, echoed.body).toBe(200);

    const trail = (await t.admin('GET', `/audit?objectType=advertiser&objectId=${advertiserId}`)).json()
      .data as Array<{ action: string; before: { pricing: string }; after: { pricing: string } }>;
    const changes = trail.filter((e) => e.before?.pricing !== e.after?.pricing);
    expect(changes.map((e) => [e.action, e.before.pricing, e.after.pricing])).toEqual([
      ['update', 'operator', 'advertiser'],
    ]);
  });

  it('lets the allowed advertiser’s admins and managers price their campaigns like the operator, from then on', async () => {
    await allow('advertiser');
    const set = await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(2.5) }, manager);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.price).toEqual({ ...cpm(2.5), currency: 'USD' });
    // A price is not what partners show: the running campaign keeps running, as for the operator.
    expect(set.json().data.status).toBe('running');

    // Priority and weight stay the operator's; a reporter changes nothing.
    const priority = await t.admin('PATCH', `/campaigns/${running}`, { priority: 5 }, manager);
    expect(priority.statusCode).toBe(403);
    expect(priority.json().message).toBe("only the operator may set a campaign's priority");
    const reporter = await t.admin(
      'PATCH',
      `/campaigns/${running}`,
      { price: cpm(9) },
      await tokenOf('reporter'),
    );
    expect(reporter.statusCode).toBe(403);

    const admin = await tokenOf('admin');
    const created = await t.admin(
      'POST',
      '/campaigns',
      { ...campaign({ price: { model: 'cpc', amountMicros: 300_000 } }), status: undefined, advertiserId },
      admin,
    );
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.status).toBe('draft');
    expect(created.json().data.price).toMatchObject({ model: 'cpc', amountMicros: 300_000 });

    // Kept in the prices with who set it, and audited like the operator's.
    const [inForce] = await history(running);
    expect(inForce).toMatchObject({ ...cpm(2.5), setBy: expect.stringMatching(/^admin:\d+$/) });
    const managerId = await tokenIdOf('manager');
    expect(inForce?.['setBy']).toBe(`admin:${managerId}`);
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${running}`)).json()
      .data as Array<{
      action: string;
      actor: string;
      before: { price: unknown };
      after: { price: unknown };
    }>;
    const update = trail.find((entry) => entry.action === 'update');
    expect(update).toMatchObject({
      actor: `admin:${managerId}`,
      before: { price: null },
      after: { price: cpm(2.5) },
    });

    // Applies from then on: an impression before it cost nothing, the next one its CPM's share.
    const fresh = await t.addCampaigns([campaign({ title: 'Fresh' })], 'Pricing Ads');
    await t.state.refresh();
    const impression = () => t.track('impression', { campaignId: fresh[0], placement: 'header_banner' });
    expectTracked(await impression(), 'impression');
    expect((await t.admin('PATCH', `/campaigns/${fresh[0]}`, { price: cpm(2.5) }, manager)).statusCode).toBe(
      200,
    );
    await t.state.refresh();
    expectTracked(await impression(), 'impression');
    const costs = await t.store.db
      .selectFrom('events')
      .select('cost_micros')
      .where('campaign_id', '=', fresh[0])
      .orderBy('id')
      .execute();
    expect(costs.map((row) => Number(row.cost_micros))).toEqual([0, 2_500]);

    // Withdrawn, the advertiser is refused again; the prices it set stay.
    await allow('operator');
    const refused = await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(3) }, manager);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden', message: expect.stringMatching(NOT_ALLOWED) });
    expect((await history(running))[0]).toMatchObject(cpm(2.5));
  });

  it('follows the review rules of the advertiser’s other edits: a price leaves review and approval as they are', async () => {
    await allow('advertiser');
    const [pending] = await t.addCampaigns(
      [campaign({ title: 'Pending', status: 'pending_review' })],
      'Pricing Ads',
    );
    const [rejected] = await t.addCampaigns(
      [campaign({ title: 'Rejected', status: 'pending_review' })],
      'Pricing Ads',
    );
    expect((await t.admin('POST', `/campaigns/${rejected}/reject`, { reason: 'no' })).statusCode).toBe(200);
    const statuses: Record<string, string> = {};
    for (const [name, id] of Object.entries({ running, pending, rejected })) {
      const answer = await t.admin('PATCH', `/campaigns/${id}`, { price: cpm(1) }, manager);
      expect(answer.statusCode, answer.body).toBe(200);
      statuses[name] = answer.json().data.status as string;
    }
    // As for any edit: approved and under review stay where they are, a rejected one returns to draft.
    expect(statuses).toEqual({ running: 'running', pending: 'pending_review', rejected: 'draft' });
  });
});
