import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { campaignForm, WHOLE_CAMPAIGN } from './helpers/dashboard-fixtures.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

/** Editing campaigns, why one is not serving, and what a reviewer sees changed (D11, D14). */
describe.each(ENGINES)('dashboard campaigns on %s', (engine) => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let advertiserId: number;
  let advertiser: BrowserClient;
  let operator: BrowserClient;

  const person = (email: string, account: string) =>
    signedInPerson(t, now, { email, account, role: 'manager' });

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    const [id] = await t.addCampaigns([campaign({ title: 'Seed' })], 'Editing Ads');
    advertiserId = (await t.campaigns.get(id)).advertiserId;
    advertiser = await person(`editor-${engine}@example.com`, `advertiser:${advertiserId}`);
    operator = await person(`reviewer-${engine}@example.com`, 'operator');
  });
  afterAll(async () => t?.close());

  it('fills the edit form with the campaign as it is, times on its own wall clock', async () => {
    const [id] = await t.addCampaigns(
      [
        campaign({
          title: 'Paris breakfast',
          timeZone: 'Europe/Paris',
          startAt: '2026-07-01T07:00:00Z',
          countries: ['FR', 'BE'],
          caps: { impressionsDaily: 500, clicksTotal: 40 },
        }),
      ],
      'Editing Ads',
    );
    const form = await advertiser.get(`/campaigns/${id}/edit`);
    expect(form.status).toBe(200);
    expect(form.body).toContain('value="Paris breakfast"');
    expect(form.body).toContain('value="2026-07-01T09:00"'); // 07:00 UTC is 09:00 in Paris in July
    expect(form.body).toContain('value="BE, FR"');
    expect(form.body).toMatch(/id="impressionsDaily"[^>]*value="500"/);
    expect(form.body).toMatch(/id="clicksTotal"[^>]*value="40"/);
  });

  it('sends an approved campaign whose creative changed back to review, and shows the reviewer what changed', async () => {
    const [id] = await t.addCampaigns(
      [campaign({ title: 'Summer offer', countries: ['US'] })],
      'Editing Ads',
    );
    const saved = await advertiser.submit(
      `/campaigns/${id}/edit`,
      `/campaigns/${id}/edit`,
      campaignForm({ title: 'Summer offer, now 20% off', countries: 'US, CA' }),
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe(`/campaigns/${id}`);
    expect((await t.campaigns.get(id)).status).toBe('pending_review');
    const page = await advertiser.get(`/campaigns/${id}`);
    expect(page.body).toContain('It waits for the operator’s review');

    const review = await operator.get('/review');
    const card = review.body.slice(review.body.indexOf('Summer offer, now 20% off'));
    expect(card).toContain('Changed since its last approval');
    const changes = card.slice(card.indexOf('class="changes"'), card.indexOf('</ul>'));
    expect(changes).toContain(
      '<strong>Title</strong>: <del>Summer offer</del> → <ins>Summer offer, now 20% off</ins>',
    );
    expect(changes).toContain('<strong>Countries</strong>: <del>US</del> → <ins>CA, US</ins>');
    expect(changes).not.toContain('<strong>Placements</strong>');
  });

  it('shows the reviewer the whole ad: as a partner shows it, with its flight, caps and targeting', async () => {
    const created = await t.campaigns.create(advertiserId, WHOLE_CAMPAIGN);
    await t.campaigns.act(created.id, 'submit');
    const review = await operator.get('/review');
    const card = review.body.slice(review.body.indexOf('<h2>Autumn walks</h2>'));
    const text = card.slice(0, card.indexOf('</li>', card.indexOf('class="actions"')));
    expect(text).toContain('New campaign, never approved.');
    expect(text).toContain(
      '<p class="ad-title">Autumn walks</p><p>Boots for wet paths, 15% off this month.</p>',
    );
    for (const shown of [
      '<dt>Category</dt><dd>lifestyle</dd>',
      '<dt>Placements</dt><dd>header_banner, sidebar_top</dd>',
      '<dt>Countries</dt><dd>BE, FR</dd>',
      '<dt>Devices</dt><dd>mobile</dd>',
      // The flight on the campaign's own wall clock: 07:00 UTC is 09:00 in Paris in July.
      '2026-07-01 09:00 Europe/Paris to 2026-07-31 22:00 Europe/Paris',
      '500 impressions and no clicks a day; no impressions and 40 clicks in total',
      'evenly over each cap’s period',
      'Editing Ads <span class="note">#' + String(advertiserId) + '</span>',
      // The click-through URL is read, never followed: text, not a link.
      WHOLE_CAMPAIGN.destinationUrl.replaceAll('&', '&amp;'),
    ])
      expect(text).toContain(shown);
    expect(text).not.toContain('href="https://advertiser.example');
  });

  it('shows each changed field before and after, times on the campaign’s wall clock', async () => {
    const [id] = await t.addCampaigns(
      [campaign({ title: 'Winter sale', timeZone: 'Europe/Paris', caps: { impressionsDaily: 100 } })],
      'Editing Ads',
    );
    await t.campaigns.update(id, {
      description: 'Now with free returns.',
      startAt: '2026-12-01T08:00:00Z',
      caps: { impressionsDaily: 300 },
    });
    expect((await t.campaigns.get(id)).status).toBe('pending_review');
    const review = await operator.get('/review');
    const card = review.body.slice(review.body.indexOf('<h2>Winter sale</h2>'));
    const changes = card.slice(card.indexOf('class="changes"'), card.indexOf('</ul>'));
    expect(changes).toContain(
      '<strong>Description</strong>: <del>none</del> → <ins>Now with free returns.</ins>',
    );
    expect(changes).toContain(
      '<strong>Start</strong>: <del>no start</del> → <ins>2026-12-01 09:00 Europe/Paris</ins>',
    );
    expect(changes).toContain(
      '<strong>Caps</strong>: <del>100 impressions and no clicks a day; no impressions and no clicks in total</del> → ' +
        '<ins>300 impressions and no clicks a day; no impressions and no clicks in total</ins>',
    );
    expect(changes).not.toContain('<strong>Title</strong>');
  });

  it('says a campaign never approved is new', async () => {
    const created = await t.campaigns.create(advertiserId, {
      title: 'Brand new',
      destinationUrl: 'https://advertiser.example/new',
      placements: ['header_banner'],
    });
    await t.campaigns.act(created.id, 'submit');
    const review = await operator.get('/review');
    const card = review.body.slice(review.body.indexOf('<h2>Brand new</h2>'));
    expect(card.slice(0, 200)).toContain('New campaign, never approved.');
  });

  it('keeps a refused edit as typed with the service’s message, and changes nothing', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Steady' })], 'Editing Ads');
    const refused = await advertiser.submit(
      `/campaigns/${id}/edit`,
      `/campaigns/${id}/edit`,
      campaignForm({ title: 'Steady', destinationUrl: 'ftp://nowhere' }),
    );
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('destinationUrl');
    expect(refused.body).toContain('value="ftp://nowhere"');
    const unchanged = await t.campaigns.get(id);
    expect([unchanged.status, unchanged.destinationUrl]).toEqual([
      'running',
      'https://advertiser.example/landing',
    ]);
  });

  it('tells why a campaign is not serving, and says so when it is', async () => {
    const [serving] = await t.addCampaigns([campaign({ title: 'On air' })], 'Editing Ads');
    expect((await advertiser.get(`/campaigns/${serving}`)).body).toContain('Yes: partners receive it');
    const [ended] = await t.addCampaigns(
      [campaign({ title: 'Held', caps: { impressionsDaily: 1 } })],
      'Editing Ads',
    );
    await t.state.refresh();
    expect(
      (await t.track('impression', { campaignId: ended, placement: 'header_banner', location: 'US' }))
        .statusCode,
    ).toBe(200);
    const held = await advertiser.get(`/campaigns/${ended}`);
    expect(held.body).toContain('A daily cap was reached: it is served again from 2026-06-02 00:00 UTC.');
  });
});
