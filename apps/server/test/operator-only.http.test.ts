import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

/**
 * What stays the operator's whatever an advertiser's or partner's people or tokens ask (D11, D13):
 * the order campaigns are served in, review of what partners show, new keys while a key is
 * suspended, and the deployment-wide metrics.
 */
describe.each(ENGINES)('what only the operator may do, on %s', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ engine });
  });
  afterEach(() => t.close());

  /** A token acting for `account` with `role`, as an advertiser's or partner's script would hold. */
  const scopedToken = async (account: string, role: string) =>
    (await t.services.tokens.create({ label: `${account} ${role}`, account, role })).plaintext;
  const fetchedTitles = async () =>
    ((await t.fetch('placement=header_banner')).json().data as Array<{ title: string }>).map(
      (served) => served.title,
    );

  describe('a campaign’s priority and weight, and review of what partners see', () => {
    let own = 0;
    let advertiserId = 0;
    let manager = '';
    beforeEach(async () => {
      await t.addCampaigns([campaign({ title: 'Rival', priority: 10 })], 'Rival Ads');
      [own] = await t.addCampaigns([campaign({ title: 'Own' })], 'Own Ads');
      advertiserId = (await t.campaigns.get(own)).advertiserId;
      manager = await scopedToken(`advertiser:${advertiserId}`, 'manager');
    });

    it('refuses an advertiser’s priority or weight with 403 naming the field, and serves as before', async () => {
      expect(await fetchedTitles()).toEqual(['Rival', 'Own']);
      for (const [field, value] of [
        ['priority', 1000],
        ['weight', 1_000_000],
      ] as const) {
        const answer = await t.admin('PATCH', `/campaigns/${own}`, { [field]: value }, manager);
        expect(answer.statusCode, answer.body).toBe(403);
        expect(answer.json()).toEqual({
          status: 'error',
          code: 'forbidden',
          message: `only the operator may set a campaign's ${field}`,
        });
      }
      const both = await t.admin('PATCH', `/campaigns/${own}`, { priority: 5, weight: 5 }, manager);
      expect(both.json().message).toBe("only the operator may set a campaign's priority and weight");
      // Nor on a new campaign, which would carry it through review unnoticed.
      const created = await t.admin(
        'POST',
        '/campaigns',
        { ...campaign({ priority: 1000 }), status: undefined, advertiserId },
        manager,
      );
      expect(created.statusCode, created.body).toBe(403);
      expect(created.json().message).toBe("only the operator may set a campaign's priority");
      const unchanged = await t.campaigns.get(own);
      expect([unchanged.status, unchanged.priority, unchanged.weight]).toEqual(['running', 0, 1]);
      await t.state.refresh();
      expect(await fetchedTitles()).toEqual(['Rival', 'Own']);
      // The values it already has are no change: a client that sends back what it read is not refused.
      const echoed = await t.admin('PATCH', `/campaigns/${own}`, { priority: 0, weight: 1 }, manager);
      expect(echoed.statusCode, echoed.body).toBe(200);
    });

    it('lets the operator set them while the campaign runs', async () => {
      const answer = await t.admin('PATCH', `/campaigns/${own}`, { priority: 1000 });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json().data.status).toBe('running');
      await t.state.refresh();
      expect(await fetchedTitles()).toEqual(['Own', 'Rival']);
    });

    it.each([
      ['title', 'Own, now free'],
      ['description', 'Now with more'],
      ['category', 'health'],
      ['destinationUrl', 'https://elsewhere.example/'],
    ])('sends a running campaign back to review when its %s changes', async (field, value) => {
      const answer = await t.admin('PATCH', `/campaigns/${own}`, { [field]: value }, manager);
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json().data.status).toBe('pending_review');
      await t.state.refresh();
      expect(await fetchedTitles()).toEqual(['Rival']);
    });

    it('keeps it running when only its targeting, flight, caps or pacing change', async () => {
      const answer = await t.admin(
        'PATCH',
        `/campaigns/${own}`,
        { countries: ['US'], caps: { clicksDaily: 50 }, pacing: 'even', timeZone: 'Europe/Paris' },
        manager,
      );
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json().data.status).toBe('running');
    });

    it('keeps a completed campaign’s creative, so raising its cap cannot bring back one unreviewed', async () => {
      const [done] = await t.addCampaigns(
        [campaign({ title: 'Done', status: 'completed', caps: { impressionsTotal: 1 } })],
        'Own Ads',
      );
      const answer = await t.admin(
        'PATCH',
        `/campaigns/${done}`,
        { title: 'Unreviewed', caps: { impressionsTotal: 100 } },
        manager,
      );
      expect(answer.statusCode, answer.body).toBe(409);
      expect((await t.campaigns.get(done)).title).toBe('Done');
    });
  });

  describe('new keys while one of the partner’s keys is suspended', () => {
    let partnerId = 0;
    let partnerAdmin = '';
    beforeEach(async () => {
      partnerId = (await t.partners.getKey(t.apiKeyId)).partnerId;
      partnerAdmin = await scopedToken(`partner:${partnerId}`, 'admin');
      const suspended = await t.admin('POST', `/keys/${t.apiKeyId}/suspend`, { reason: 'click fraud' });
      expect(suspended.statusCode, suspended.body).toBe(200);
    });
    const keyCount = async () => (await t.partners.listKeys(partnerId)).length;

    it('refuses the partner’s own token with the reason, and lets the operator create one', async () => {
      const prefix = (await t.partners.getKey(t.apiKeyId)).displayPrefix;
      const refused = await t.admin('POST', `/partners/${partnerId}/keys`, { label: 'fresh' }, partnerAdmin);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().message).toBe(
        `api key ${prefix}… is suspended (click fraud); while it is, only the operator may create keys for this partner`,
      );
      expect(await keyCount()).toBe(1);
      // Revoking the suspended key would lift the hold: that too is the operator's.
      const revoked = await t.admin('POST', `/keys/${t.apiKeyId}/revoke`, undefined, partnerAdmin);
      expect(revoked.statusCode, revoked.body).toBe(403);
      expect((await t.partners.getKey(t.apiKeyId)).status).toBe('suspended');

      const byOperator = await t.admin('POST', `/partners/${partnerId}/keys`, { label: 'given' });
      expect(byOperator.statusCode, byOperator.body).toBe(201);
      expect((await t.partners.createKey(partnerId, 'from the command line')).plaintext).toMatch(/^plc_/);

      expect((await t.admin('POST', `/keys/${t.apiKeyId}/reinstate`)).statusCode).toBe(200);
      const after = await t.admin('POST', `/partners/${partnerId}/keys`, { label: 'fresh' }, partnerAdmin);
      expect(after.statusCode, after.body).toBe(201);
    });

    it('tells the partner’s people in the dashboard instead of offering the form, and refuses it there too', async () => {
      const browser = await signedInPerson(t, Date.now(), {
        email: 'keys@partner.example',
        account: `partner:${partnerId}`,
        role: 'admin',
      });
      const page = await browser.get('/keys');
      expect(page.status).toBe(200);
      expect(page.body).toContain(
        'is suspended (click fraud); while it is, only the operator may create keys',
      );
      expect(page.body).not.toContain('Create a key');
      const posted = await browser.post('/keys', { _csrf: page.csrf!, label: 'fresh' });
      expect(posted.status).toBe(403);
      expect(posted.body).toContain('only the operator may create keys for this partner');
      expect(await keyCount()).toBe(1);
    });
  });

  it('answers /metrics to the operator’s tokens only', async () => {
    const metrics = (token: string) =>
      t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    const partnerId = (await t.partners.getKey(t.apiKeyId)).partnerId;
    const [campaignId] = await t.addCampaigns([campaign()]);
    const advertiserId = (await t.campaigns.get(campaignId)).advertiserId;
    for (const account of [`partner:${partnerId}`, `advertiser:${advertiserId}`]) {
      for (const role of ['admin', 'reporter']) {
        const answer = await metrics(await scopedToken(account, role));
        expect(answer.statusCode, `${account} ${role}`).toBe(403);
        expect(answer.json()).toEqual({ status: 'error', message: 'only the operator may read the metrics' });
      }
    }
    expect((await metrics(t.adminToken)).statusCode).toBe(200);
    expect((await metrics(await scopedToken('operator', 'reporter'))).statusCode).toBe(200);
  });
});
