import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';

/**
 * What a partner blocks, in the dashboard: its own people block and unblock advertisers from their
 * Blocks page (an empty list says what to do; the picker names the advertisers of the campaigns
 * they may be served), see the categories the operator blocks for them, and the fetch follows; the
 * operator does the same from the partners list.
 */
describe('a partner’s blocks in the dashboard', () => {
  let t: TestApp;
  const now = Date.now();
  let partnerId: number;
  let blockable: number;
  let own: BrowserClient;
  let reporter: BrowserClient;
  let operator: BrowserClient;
  let page: string;

  beforeAll(async () => {
    t = await createTestApp();
    partnerId = (await t.partners.findPartner('Test Partner')).id;
    await t.partners.updatePartner(partnerId, { blockedCategories: ['politics'] });
    const [served] = await t.addCampaigns([campaign({ title: 'Lamps' })], 'Lighthouse Goods');
    await t.addCampaigns([campaign({ status: 'draft' })], 'Drafting Ads');
    blockable = (await t.campaigns.get(served)).advertiserId;
    const person = (email: string, account: string, role: string) =>
      signedInPerson(t, now, { email, account, role });
    own = await person('partner@example.com', `partner:${partnerId}`, 'manager');
    reporter = await person('reader@example.com', `partner:${partnerId}`, 'reporter');
    operator = await person('ops@example.com', 'operator', 'manager');
    page = `/partners/${partnerId}/blocks`;
  }, 60_000);
  afterAll(async () => t?.close());

  const fetched = async () =>
    ((await t.fetch('placement=header_banner')).json().data as Array<{ title: string }>).map((c) => c.title);

  it('lets the partner’s people block an advertiser they may be served, and unblock it', async () => {
    const empty = await own.get(page);
    expect(empty.status).toBe(200);
    expect(empty.body).toContain(
      'You block no advertiser: every advertiser’s campaigns may be served to you.',
    );
    expect(empty.body).toContain('Choose one below to block it.');
    expect(empty.body).toMatch(/<option value="\d+">Lighthouse Goods<\/option>/);
    // An advertiser with no approved campaign is not the partner's to see.
    expect(empty.body).not.toContain('Drafting Ads');
    expect(empty.body).toContain('politics');
    expect(empty.body).toContain('The operator sets the categories you never receive');
    // The menu links the partner's own Blocks page.
    expect(empty.body).toContain(`<a href="${page}"`);
    expect(await fetched()).toEqual(['Lamps']);

    const blocked = await own.submit(page, page, { blockedAdvertisers: String(blockable) });
    expect(blocked.status, blocked.body).toBe(303);
    expect(blocked.headers.location).toBe(page);
    expect((await t.partners.findPartner(partnerId)).blockedAdvertisers).toEqual([blockable]);
    const shown = (await own.get(page)).body;
    expect(shown).toContain('the advertiser is blocked');
    expect(shown).toMatch(/<td[^>]*>Lighthouse Goods<\/td>/);
    expect(shown).toContain('aria-label="Unblock Lighthouse Goods"');
    await t.state.refresh();
    expect(await fetched()).toEqual([]);

    const unblocked = await own.submit(page, `${page}/unblock`, { advertiserId: String(blockable) });
    expect(unblocked.status, unblocked.body).toBe(303);
    expect((await t.partners.findPartner(partnerId)).blockedAdvertisers).toEqual([]);
    await t.state.refresh();
    expect(await fetched()).toEqual(['Lamps']);
  });

  it('refuses an advertiser the partner may not see beside the picker, and a reporter only reads', async () => {
    const drafting = (await t.store.findAdvertiser('Drafting Ads'))!.id;
    const refused = await own.submit(page, page, { blockedAdvertisers: String(drafting) });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`Advertiser to block names an unknown advertiser: ${drafting}`);
    expect(refused.body).toMatch(/<select[^>]*id="blockedAdvertisers"[^>]*aria-invalid="true"/);
    const read = await reporter.get(page);
    expect(read.status).toBe(200);
    expect(read.body).not.toContain('<select');
    expect(read.body).not.toContain('Choose one below');
    expect((await reporter.submit('/reports', page, { blockedAdvertisers: String(blockable) })).status).toBe(
      403,
    );
  });

  it('lets the operator block any advertiser for a partner, from its count on the partners list', async () => {
    const list = (await operator.get('/partners')).body;
    expect(list).toContain(`href="${page}"`);
    const shown = (await operator.get(page)).body;
    expect(shown).toContain('Test Partner blocks no advertiser');
    expect(shown).toContain('Drafting Ads');
    const drafting = (await t.store.findAdvertiser('Drafting Ads'))!.id;
    expect((await operator.submit(page, page, { blockedAdvertisers: String(drafting) })).status).toBe(303);
    expect((await t.partners.findPartner(partnerId)).blockedAdvertisers).toEqual([drafting]);
    expect((await operator.get('/partners')).body).toContain('1 advertisers blocked by Test Partner');
    // The partner's people see the name of what is blocked for them.
    expect((await own.get(page)).body).toMatch(/<td[^>]*>Drafting Ads<\/td>/);
  });
});
