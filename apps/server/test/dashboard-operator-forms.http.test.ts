import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { campaignForm } from './helpers/dashboard-fixtures.js';
import { signedInPerson } from './helpers/people.js';

/**
 * What the operator does in the dashboard that the management API allows (D13): campaigns for any
 * advertiser, their priority and weight, and a partner key's rate limits (D7).
 */
describe('the operator’s campaign and key forms', () => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let advertiserId: number;
  let otherAdvertiserId: number;
  let operator: BrowserClient;
  let advertiser: BrowserClient;
  let operatorReporter: BrowserClient;

  const person = (email: string, account: string, role = 'manager') =>
    signedInPerson(t, now, { email, account, role });

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    const [id] = await t.addCampaigns([campaign({ title: 'Seed' })], 'Harbour Ads');
    advertiserId = (await t.campaigns.get(id)).advertiserId;
    otherAdvertiserId = (await t.store.createAdvertiser('Lighthouse Ads', now)).id;
    operator = await person('ops@example.com', 'operator');
    operatorReporter = await person('ops-reader@example.com', 'operator', 'reporter');
    advertiser = await person('harbour@example.com', `advertiser:${advertiserId}`);
  });
  afterAll(async () => t?.close());

  const fields = campaignForm({ title: 'Operator made', destinationUrl: 'https://lighthouse.example/' });

  it('lets the operator create a campaign for the advertiser chosen, with its priority and weight', async () => {
    const form = await operator.get('/campaigns/new');
    expect(form.status).toBe(200);
    expect(form.body).toMatch(/<select id="advertiserId" name="advertiserId" required>/);
    expect(form.body).toContain('Lighthouse Ads (#');
    expect(form.body).toMatch(/id="priority"[^>]*value="0"/);
    expect(form.body).toMatch(/id="weight"[^>]*value="1"/);

    const saved = await operator.submit('/campaigns/new', '/campaigns/new', {
      ...fields,
      advertiserId: String(otherAdvertiserId),
      priority: '7',
      weight: '30',
    });
    expect(saved.status, saved.body).toBe(303);
    const id = Number(/\/campaigns\/(\d+)$/.exec(saved.headers.location ?? '')![1]);
    const created = await t.campaigns.get(id);
    expect(created).toMatchObject({
      advertiserId: otherAdvertiserId,
      status: 'draft',
      priority: 7,
      weight: 30,
    });
  });

  it('asks the operator to choose an advertiser, and keeps what was typed', async () => {
    const refused = await operator.submit('/campaigns/new', '/campaigns/new', { ...fields, weight: '5' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Advertiser is required: choose an advertiser');
    expect(refused.body).toContain('value="Operator made"');
    expect(refused.body).toMatch(/id="weight"[^>]*value="5"/);
  });

  it('names a priority out of range in the service’s words', async () => {
    const refused = await operator.submit('/campaigns/new', '/campaigns/new', {
      ...fields,
      advertiserId: String(otherAdvertiserId),
      priority: '5000',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('Priority must be an integer between -1000 and 1000');
  });

  it('never shows an advertiser’s people the advertiser choice, priority or weight', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Theirs', priority: 3 })], 'Harbour Ads');
    for (const path of ['/campaigns/new', `/campaigns/${id}/edit`]) {
      const form = await advertiser.get(path);
      expect(form.status).toBe(200);
      expect(form.body).not.toContain('name="advertiserId"');
      expect(form.body).not.toContain('name="priority"');
      expect(form.body).not.toContain('name="weight"');
    }
    // Their edit keeps the operator's priority: the form does not send it.
    const saved = await advertiser.submit(`/campaigns/${id}/edit`, `/campaigns/${id}/edit`, {
      ...fields,
      title: 'Theirs',
    });
    expect(saved.status).toBe(303);
    expect((await t.campaigns.get(id)).priority).toBe(3);
  });

  it('refuses a priority or weight an advertiser’s person posts anyway', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Pushy' })], 'Harbour Ads');
    const refused = await advertiser.submit(`/campaigns/${id}/edit`, `/campaigns/${id}/edit`, {
      ...fields,
      title: 'Pushy',
      priority: '1000',
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("only the operator may set a campaign's priority");
    expect((await t.campaigns.get(id)).priority).toBe(0);
    // Creating for another advertiser is not theirs either: the campaign is their own.
    const created = await advertiser.submit('/campaigns/new', '/campaigns/new', {
      ...fields,
      title: 'Not for the lighthouse',
      advertiserId: String(otherAdvertiserId),
    });
    expect(created.status).toBe(303);
    const mine = Number(/\/campaigns\/(\d+)$/.exec(created.headers.location ?? '')![1]);
    expect((await t.campaigns.get(mine)).advertiserId).toBe(advertiserId);
  });

  it('lets the operator change a running campaign’s priority and weight without sending it to review', async () => {
    const [id] = await t.addCampaigns(
      [campaign({ title: 'Live one', priority: 1, weight: 2 })],
      'Harbour Ads',
    );
    const form = await operator.get(`/campaigns/${id}/edit`);
    expect(form.body).toMatch(/id="priority"[^>]*value="1"/);
    expect(form.body).toMatch(/id="weight"[^>]*value="2"/);
    expect(form.body).not.toContain('name="advertiserId"');
    const saved = await operator.submit(`/campaigns/${id}/edit`, `/campaigns/${id}/edit`, {
      ...fields,
      destinationUrl: 'https://advertiser.example/landing',
      title: 'Live one',
      priority: '50',
      weight: '9',
    });
    expect(saved.status, saved.body).toBe(303);
    expect(await t.campaigns.get(id)).toMatchObject({ status: 'running', priority: 50, weight: 9 });
    const fetched = await t.fetch('placement=header_banner');
    expect(fetched.statusCode).toBe(200);
  });

  it('refuses the operator’s reporters the new campaign form', async () => {
    expect((await operatorReporter.get('/campaigns/new')).status).toBe(403);
  });

  /** A fresh key of a partner of its own, at the default limits. */
  let keyId: number;
  let keyPlaintext: string;
  let partnerId: number;
  const limits = async () => (await t.admin('GET', `/keys/${keyId}`)).json().data.rateLimits as unknown;

  it('lets the operator set, and reset, a key’s rate limits', async () => {
    partnerId = (await t.partners.createPartner('Limited Partner')).id;
    const created = await t.partners.createKey(partnerId, 'limited');
    keyId = created.key.id;
    keyPlaintext = created.plaintext;
    const keys = await operator.get('/keys');
    expect(keys.body).toContain('fetch 100/s, burst 200; events 1000/s, burst 2000 (defaults)');
    const action = `/keys/${keyId}/rate-limits`;
    expect(keys.body).toContain(`action="${action}"`);

    const saved = await operator.submit('/keys', action, {
      fetchRate: '5',
      fetchBurst: '10',
      eventsRate: '',
      eventsBurst: '40',
    });
    expect(saved.status, saved.body).toBe(303);
    expect(await limits()).toEqual({ fetchRate: 5, fetchBurst: 10, eventsRate: null, eventsBurst: 40 });
    expect((await operator.get('/keys')).body).toContain('fetch 5/s, burst 10; events 1000/s, burst 40');

    // The key now holds to its burst of 10 fetches.
    const answers: number[] = [];
    for (let i = 0; i < 12; i++)
      answers.push((await t.fetch('placement=header_banner', keyPlaintext)).statusCode);
    expect(answers).toContain(429);

    const reset = await operator.submit('/keys', action, {
      fetchRate: '',
      fetchBurst: '',
      eventsRate: '',
      eventsBurst: '',
    });
    expect(reset.status).toBe(303);
    expect(await limits()).toEqual({
      fetchRate: null,
      fetchBurst: null,
      eventsRate: null,
      eventsBurst: null,
    });
  });

  it('names a limit out of range, keeps the form open as typed, and changes nothing', async () => {
    const action = `/keys/${keyId}/rate-limits`;
    const refused = await operator.submit('/keys', action, { fetchRate: '0', fetchBurst: '12' });
    expect(refused.status).toBe(400);
    // Beside the field, in the form's words: its label, and blank where the API says null.
    expect(refused.body).toMatch(
      /id="keys-\d+-rate-limits-fetchRate-problem"[^>]*>Fetches per second must be an integer between 1 and 1000000, or left empty for the default</,
    );
    expect(refused.body).toMatch(/<details class="limits" open>/);
    expect(refused.body).toMatch(new RegExp(`id="keys-${keyId}-rate-limits-fetchBurst"[^>]*value="12"`));
    expect(await limits()).toMatchObject({ fetchRate: null, fetchBurst: null });
  });

  it('keeps rate limits the operator’s: a partner’s people neither see nor set them', async () => {
    const partner = await person('partner-admin@example.com', `partner:${partnerId}`, 'admin');
    const keys = await partner.get('/keys');
    expect(keys.body).not.toContain('Rate limits');
    const refused = await partner.submit('/keys', `/keys/${keyId}/rate-limits`, {
      fetchRate: '1000',
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('only the operator may suspend, reinstate or limit keys');
  });
});
