import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';
import { setCampaignPrice } from './helpers/prices.js';

/** The titles of the campaigns listed, in order. */
/** A page without its cells' column names (shown above each cell on a phone), to read rows by. */
const plain = (body: string): string => body.replace(/ data-label="[^"]*"/g, '');
const titles = (body: string): string[] =>
  [...plain(body).matchAll(/<td><a href="\/campaigns\/\d+">([^<]+)<\/a>/g)].map((match) => match[1]);

/** The row of the campaign titled `title`. */
const rowOf = (page: string, title: string): string => {
  const body = plain(page);
  const start = body.lastIndexOf('<tr', body.indexOf(`>${title}</a>`));
  return body.slice(start, body.indexOf('</tr>', start));
};

/**
 * The campaigns list (D14): delivery today and in total, caps' progress, filters, search, sorting
 * and paging, all in the query string, for the operator and an advertiser's people.
 */
describe('the campaigns list', () => {
  let t: TestApp;
  let now = Date.parse('2026-06-01T12:00:00Z');
  let operator: BrowserClient;
  let advertiser: BrowserClient;
  const ids: Record<string, number> = {};
  /** Every campaign's title, in the order of their names. */
  const BY_NAME = ['Busy offer', 'Capped offer', 'Other advertiser’s offer', 'Quiet offer'];

  const person = (email: string, account: string) =>
    signedInPerson(t, now, { email, account, role: 'manager' });

  const impression = async (id: number, kind: 'impression' | 'click' = 'impression') => {
    const answer = await t.track(kind, { campaignId: id, placement: 'header_banner' });
    expect(answer.statusCode, answer.body).toBe(200);
  };

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    const [capped, busy, quiet] = await t.addCampaigns(
      [
        campaign({ title: 'Capped offer', caps: { impressionsDaily: 1000, clicksTotal: 50 } }),
        campaign({ title: 'Busy offer' }),
        campaign({ title: 'Quiet offer', status: 'paused' }),
      ],
      'List Ads',
    );
    const [other] = await t.addCampaigns([campaign({ title: 'Other advertiser’s offer' })], 'Other Ads');
    Object.assign(ids, { capped, busy, quiet, other });
    // A click of the capped offer costs 2.50; a thousand impressions of the busy one 12.345678.
    const since = Date.parse('2026-05-31T00:00:00Z');
    await setCampaignPrice(t.store, capped, { model: 'cpc', amountMicros: 2_500_000, since });
    await setCampaignPrice(t.store, busy, { model: 'cpm', amountMicros: 12_345_678, since });
    // Yesterday's delivery (in total, not today) and today's.
    now = Date.parse('2026-05-31T20:00:00Z');
    await impression(busy);
    await impression(busy);
    now = Date.parse('2026-06-01T11:00:00Z');
    for (let i = 0; i < 3; i++) await impression(capped);
    await impression(capped, 'click');
    await impression(busy);
    now = Date.parse('2026-06-01T12:00:00Z');
    const advertiserId = (await t.campaigns.get(capped)).advertiserId;
    operator = await person('list-ops@example.com', 'operator');
    advertiser = await person('list-ads@example.com', `advertiser:${advertiserId}`);
  });
  afterAll(async () => t?.close());

  it('shows each campaign’s delivery today and in total, its spend in total, and its caps’ progress', async () => {
    const page = await operator.get('/campaigns');
    expect(page.status).toBe(200);
    const capped = rowOf(page.body, 'Capped offer');
    expect(capped).toContain('<td>3 impressions<br/>1 click</td>');
    expect(capped).toContain('3 of 1,000 impressions today');
    expect(capped).toContain('1 of 50 clicks in total');
    expect(capped).toMatch(/<meter min="0" max="1000" value="3" aria-label="3 of 1,000 impressions today"/);
    const busy = rowOf(page.body, 'Busy offer');
    expect(busy).toContain('<td>1 impression<br/>0 clicks</td>');
    expect(busy).toContain('<td>3</td><td>0</td>'); // in total: yesterday's two and today's one
    expect(busy).toContain('no caps');
    expect(busy).toContain('<td>List Ads</td>');
    // Spend in total, right-aligned in the currency's decimals: one click; three impressions,
    // floor(3 × 12,345,678 / 1000) = 37,037 micros.
    expect(page.body).toContain('Spend in total (USD)');
    expect(capped).toContain('<td class="money">2.50</td>');
    expect(busy).toContain('<td class="money">0.04</td>');
    expect(rowOf(page.body, 'Quiet offer')).toContain('<td class="money">0.00</td>');
  });

  it('filters by status and searches by name or number, in the query string', async () => {
    expect(titles((await operator.get('/campaigns?status=paused')).body)).toEqual(['Quiet offer']);
    expect(titles((await operator.get('/campaigns?q=OFFER&status=running')).body)).toEqual([
      'Other advertiser’s offer',
      'Busy offer',
      'Capped offer',
    ]);
    expect(titles((await operator.get(`/campaigns?q=%23${ids['busy']}`)).body)).toEqual(['Busy offer']);
    const none = await operator.get('/campaigns?q=nothing+like+this');
    expect(none.body).toContain('No campaign matches');
    expect(none.body).toContain('value="nothing like this"');
    // Unknown values are the default view, not an error.
    const odd = await operator.get('/campaigns?status=sleeping&sort=colour&order=up');
    expect(odd.status).toBe(200);
    expect(titles(odd.body)).toHaveLength(4);
  });

  it('sorts by the headers, each link reversing the order it shows', async () => {
    const byName = await operator.get('/campaigns?sort=name');
    expect(titles(byName.body)).toEqual(BY_NAME);
    expect(byName.body).toContain(
      '<th scope="col" aria-sort="ascending"><a href="/campaigns?sort=name&amp;order=desc">',
    );
    const reversed = await operator.get('/campaigns?sort=name&order=desc');
    expect(titles(reversed.body)).toEqual(BY_NAME.toReversed());
    // A filter stays when the sort changes, and the sort when the filter form is sent.
    const filtered = await operator.get('/campaigns?status=running&sort=name');
    expect(filtered.body).toContain('href="/campaigns?status=running&amp;sort=name&amp;order=desc"');
    expect(filtered.body).toContain('<input type="hidden" name="sort" value="name"/>');
  });

  it('sorts by delivery summed up to the last quarter hour', async () => {
    now = Date.parse('2026-06-01T12:30:00Z');
    while ((await t.store.compactRollups(Date.parse('2026-06-01T12:00:00Z'))) !== null);
    const page = await operator.get('/campaigns?sort=impressions');
    // Three each: the newer first; then those without delivery, the newer first too.
    expect(titles(page.body)).toEqual([
      'Busy offer',
      'Capped offer',
      'Other advertiser’s offer',
      'Quiet offer',
    ]);
    expect(page.body).toContain('Sorted by delivery up to the last quarter hour summed');
    const clicks = await operator.get('/campaigns?sort=clicks');
    expect(titles(clicks.body)[0]).toBe('Capped offer');
  });

  it('keeps the view in the pager’s links', async () => {
    for (let n = 0; n < 55; n++)
      await t.campaigns.create((await t.campaigns.get(ids['busy'])).advertiserId, {
        title: `Draft ${String(n).padStart(2, '0')}`,
        destinationUrl: 'https://advertiser.example/draft',
        placements: ['header_banner'],
      });
    const page = await operator.get('/campaigns?status=draft&sort=name');
    expect(page.body).toContain('<caption>1–50 of 55 campaigns</caption>');
    expect(page.body).toContain('href="/campaigns?status=draft&amp;sort=name&amp;page=2"');
    const second = await operator.get('/campaigns?status=draft&sort=name&page=2');
    expect(titles(second.body)).toEqual(['Draft 50', 'Draft 51', 'Draft 52', 'Draft 53', 'Draft 54']);
  });

  it('shows an advertiser’s people their own campaigns only, without the advertiser column', async () => {
    const page = await advertiser.get('/campaigns?q=offer');
    expect(titles(page.body)).toEqual(['Quiet offer', 'Busy offer', 'Capped offer']);
    expect(page.body).not.toContain('>Advertiser</th>');
    expect(titles((await advertiser.get(`/campaigns?q=%23${ids['other']}`)).body)).toEqual([]);
  });
});
