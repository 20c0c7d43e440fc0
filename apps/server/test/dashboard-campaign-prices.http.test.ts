import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { campaignForm } from './helpers/dashboard-fixtures.js';
import { signedInPerson } from './helpers/people.js';
import { campaignToJson } from '../src/services/campaigns.js';

/**
 * A campaign's price in the dashboard (D18): the operator sets it in units of the currency, read
 * exactly; a refused amount is named and what was typed kept; the advertiser's people see it but are
 * given no field for it, unless the operator allows their advertiser to price its campaigns (from
 * the advertisers page): then they set it on the campaign's page or in its form; the campaign's page
 * shows it and every price it has had.
 */
describe('campaign prices in the dashboard', () => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let advertiserId: number;
  let operator: BrowserClient;
  let advertiser: BrowserClient;

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    const [id] = await t.addCampaigns([campaign({ title: 'Seed' })], 'Harbour Ads');
    advertiserId = (await t.campaigns.get(id)).advertiserId;
    operator = await signedInPerson(t, now, {
      email: 'ops@example.com',
      account: 'operator',
      role: 'manager',
    });
    advertiser = await signedInPerson(t, now, {
      email: 'harbour@example.com',
      account: `advertiser:${advertiserId}`,
      role: 'manager',
    });
  });
  afterAll(async () => t?.close());

  const fields = (title: string) =>
    campaignForm({ title, destinationUrl: 'https://advertiser.example/landing' });
  const edit = (id: number, values: Record<string, string>, who = operator) =>
    who.submit(`/campaigns/${id}/edit`, `/campaigns/${id}/edit`, values);

  it('gives the operator a price: none to start, then set in units, shown with the currency', async () => {
    const form = await operator.get('/campaigns/new');
    expect(form.body).toMatch(/<select id="priceModel" name="priceModel"/);
    expect(form.body).toMatch(/<option value(="")? selected(="")?>None/);
    expect(form.body).toContain('In USD, such as 2.50');
    const saved = await operator.submit('/campaigns/new', '/campaigns/new', {
      ...fields('Priced from the form'),
      advertiserId: String(advertiserId),
      priceModel: 'cpm',
      priceAmount: '2.5',
    });
    expect(saved.status, saved.body).toBe(303);
    const id = Number(/\/campaigns\/(\d+)$/.exec(saved.headers.location ?? '')![1]);
    expect((await t.campaigns.get(id)).price).toEqual({ model: 'cpm', amountMicros: 2_500_000 });

    const again = await operator.get(`/campaigns/${id}/edit`);
    expect(again.body).toMatch(/<option value="cpm" selected(="")?>CPM/);
    expect(again.body).toMatch(/id="priceAmount"[^>]*value="2.50"/);
  });

  it('keeps the price history: a change appends, a save that keeps the price does not', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Live priced' })], 'Harbour Ads');
    const empty = await operator.get(`/campaigns/${id}`);
    expect(empty.body).toMatch(/<dt>Price<\/dt>\s*<dd>none<\/dd>/);
    expect(empty.body).toContain('No price yet: a house campaign, whose events cost nothing.');

    const base = { ...fields('Live priced'), priority: '0', weight: '1' };
    expect((await edit(id, { ...base, priceModel: 'cpc', priceAmount: '0.35' })).status).toBe(303);
    expect((await edit(id, { ...base, priceModel: 'cpc', priceAmount: '0.350' })).status).toBe(303);
    expect((await edit(id, { ...base, priceModel: 'cpm', priceAmount: '1,200' })).status).toBe(303);
    expect(await t.campaigns.get(id)).toMatchObject({
      status: 'running',
      price: { model: 'cpm', amountMicros: 1_200_000_000 },
    });

    const page = await operator.get(`/campaigns/${id}`);
    expect(page.body).toMatch(/<dt>Price<\/dt>\s*<dd>CPM USD 1,200\.00<\/dd>/);
    expect(page.body).toContain('<h2>Price history</h2>');
    expect(page.body).toContain('<caption>2 prices</caption>');
    const rows = [...page.body.matchAll(/<tr><td[^>]*>([^<]*)<\/td>(.*?)<\/tr>/g)].map((row) =>
      [...row[2].matchAll(/<td([^>]*)>([^<]*)<\/td>/g)].map(([, attributes, text]) =>
        attributes.includes('class="money"') ? `>${text}` : text,
      ),
    );
    // Amounts and spend are right-aligned in tabular figures (the stylesheet's `money` class).
    expect(rows).toEqual([
      ['CPM', '>USD 1,200.00', expect.stringMatching(/^user:\d+$/), '0', '>USD 0.00'],
      ['CPC', '>USD 0.35', expect.stringMatching(/^user:\d+$/), '0', '>USD 0.00'],
    ]);
    const css = await operator.get('/assets/dashboard.css');
    expect(css.body).toMatch(/td\.money,[^{]*\{\s*text-align: right;\s*font-variant-numeric: tabular-nums;/);
  });

  it('shows the reviewer a price changed since the last approval, in the currency', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Reviewed' })], 'Harbour Ads');
    const base = { ...fields('Reviewed'), priority: '0', weight: '1' };
    // A new price alone keeps it running; a new title then sends it to review with both changes.
    await edit(id, { ...base, priceModel: 'cpc', priceAmount: '0.355' });
    expect((await t.campaigns.get(id)).status).toBe('running');
    await edit(id, { ...base, title: 'Reviewed again', priceModel: 'cpc', priceAmount: '0.355' });
    expect((await t.campaigns.get(id)).status).toBe('pending_review');
    const queue = await operator.get('/review');
    expect(queue.body).toContain('<strong>Price</strong>: <del>none</del> → <ins>CPC USD 0.355</ins>');
  });

  it('reads an approval from before campaigns had prices as one without a price', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Old approval' })], 'Harbour Ads');
    const { price, ...approvedBeforePrices } = campaignToJson(await t.campaigns.get(id));
    expect(price).toBeNull();
    await t.store.appendAudit({
      at: now,
      actor: 'system',
      objectType: 'campaign',
      objectId: String(id),
      action: 'approve',
      reason: null,
      before: null,
      after: approvedBeforePrices,
    });
    const base = { ...fields('Old approval, renamed'), priority: '0', weight: '1', priceModel: '' };
    expect((await edit(id, base)).status).toBe(303);
    const queue = await operator.get('/review');
    const card = queue.body.split('<li class="card">').find((part) => part.includes('Old approval, renamed'));
    expect(card).toContain('<strong>Title</strong>: <del>Old approval</del>');
    expect(card).not.toContain('<strong>Price</strong>');
  });

  it('names an amount it cannot read, keeps what was typed, and changes nothing', async () => {
    const [id] = await t.addCampaigns(
      [campaign({ title: 'Typo', price: { model: 'cpm', amountMicros: 4_000_000 } })],
      'Harbour Ads',
    );
    const base = { ...fields('Typo'), priority: '0', weight: '1' };
    for (const [amount, message] of [
      ['2,5', 'Price amount has a comma in the wrong place'],
      ['', 'Price amount is required'],
      ['0', 'Price amount must be more than 0'],
      ['-1', 'Price amount must not be negative'],
      ['1.0000001', 'Price amount must have at most 6 decimals'],
    ] as const) {
      const refused = await edit(id, {
        ...base,
        title: 'Typo, renamed',
        priceModel: 'cpc',
        priceAmount: amount,
      });
      expect(refused.status, amount).toBe(422);
      expect(refused.body, amount).toContain(message);
      expect(refused.body).toMatch(/id="priceAmount"[^>]*aria-invalid="true"/);
      // What was typed is kept (an empty value renders as a bare attribute).
      const typed = amount === '' ? 'value ' : `value="${amount}"`;
      expect(refused.body).toContain(`id="priceAmount" name="priceAmount" type="text" ${typed}`);
      expect(refused.body).toMatch(/<option value="cpc" selected(="")?>CPC/);
      expect(refused.body).toContain('value="Typo, renamed"');
    }
    const unknown = await edit(id, { ...base, priceModel: 'cpa', priceAmount: '1' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toContain('Price model must be one of cpm, cpc, flat');
    expect(await t.campaigns.get(id)).toMatchObject({
      title: 'Typo',
      price: { model: 'cpm', amountMicros: 4_000_000 },
    });
    expect(await t.store.campaignPrices(id)).toHaveLength(1);
  });

  it('shows the advertiser’s people the price but no field for it, and refuses one posted anyway', async () => {
    const [id] = await t.addCampaigns(
      [campaign({ title: 'Theirs', price: { model: 'cpm', amountMicros: 2_500_000 } })],
      'Harbour Ads',
    );
    const form = await advertiser.get(`/campaigns/${id}/edit`);
    expect(form.body).not.toContain('name="priceModel"');
    expect(form.body).not.toContain('name="priceAmount"');
    expect(form.body).toContain('Price: CPM USD 2.50');
    const page = await advertiser.get(`/campaigns/${id}`);
    expect(page.body).toMatch(
      /<dt>Price<\/dt>\s*<dd>CPM USD 2\.50<p class="hint">The operator sets this campaign’s price\.<\/p><\/dd>/,
    );
    expect(page.body).not.toContain(`action="/campaigns/${id}/price"`);
    expect(page.body).toContain('<caption>One price</caption>');

    // Their save keeps the operator's price: the form does not send it.
    expect((await edit(id, fields('Theirs'), advertiser)).status).toBe(303);
    const refused = await edit(
      id,
      { ...fields('Theirs'), priceModel: 'cpm', priceAmount: '0.01' },
      advertiser,
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("only the operator may set a campaign's price");
    expect((await t.campaigns.get(id)).price).toEqual({ model: 'cpm', amountMicros: 2_500_000 });
    expect(await t.store.campaignPrices(id)).toHaveLength(1);
  });

  it('lets the advertiser’s people price their campaign on its page once the operator allows it, and not after', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Self priced' })], 'Harbour Ads');
    const list = await operator.get('/advertisers');
    expect(list.body).toContain('<th scope="col">Prices set by</th>');
    expect(list.body).toContain('Allow it: Harbour Ads sets its campaigns’ prices');
    const allowed = await operator.submit('/advertisers', `/advertisers/${advertiserId}/pricing`, {
      pricing: 'advertiser',
    });
    expect(allowed.status, allowed.body).toBe(303);
    expect((await operator.get('/advertisers')).body).toContain(
      'Withdraw: only the operator sets the prices of Harbour Ads',
    );

    const page = await advertiser.get(`/campaigns/${id}`);
    expect(page.body).toContain(`action="/campaigns/${id}/price"`);
    expect(page.body).not.toContain('The operator sets this campaign’s price.');
    expect((await advertiser.get(`/campaigns/${id}/edit`)).body).toContain('name="priceModel"');

    // A refused amount is named, kept as typed, and saves nothing.
    const price = (values: Record<string, string>) =>
      advertiser.submit(`/campaigns/${id}`, `/campaigns/${id}/price`, values);
    const refused = await price({ priceModel: 'cpm', priceAmount: '2.5.0' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatch(/id="priceAmount"[^>]*value="2.5.0"/);
    expect(refused.body).toContain('Nothing was saved');
    expect((await t.campaigns.get(id)).price).toBeNull();

    const set = await price({ priceModel: 'cpc', priceAmount: '0.40' });
    expect(set.status, set.body).toBe(303);
    expect((await t.campaigns.get(id)).price).toEqual({ model: 'cpc', amountMicros: 400_000 });
    const [inForce] = await t.store.campaignPrices(id);
    expect(inForce?.setBy).toMatch(/^user:\d+$/);

    // Withdrawn: the price is shown again as the operator's, and one posted anyway is refused.
    await operator.submit('/advertisers', `/advertisers/${advertiserId}/pricing`, { pricing: 'operator' });
    const after = await advertiser.get(`/campaigns/${id}`);
    expect(after.body).toContain('The operator sets this campaign’s price.');
    expect(after.body).not.toContain(`action="/campaigns/${id}/price"`);
    const forbidden = await price({ priceModel: 'cpc', priceAmount: '0.10' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toContain('the operator has not allowed advertiser');
    expect((await t.campaigns.get(id)).price).toEqual({ model: 'cpc', amountMicros: 400_000 });
  });
});
