import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/** The dashboard's live reports (D14) over real HTTP: each person's own figures, nothing more. */
describe.each(ENGINES)('dashboard reports on %s', (engine) => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:34:56Z');
  let own: number;
  let foreign: number;
  let ownAdvertiser: number;
  let otherPartner: number;

  const person = (email: string, account: string) =>
    signedInPerson(t, now, { email, account, role: 'reporter' });

  /** A page's totals as shown. */
  const totals = (body: string) => ({
    impressions: Number(/data-total="impressions">([\d,]+)</.exec(body)?.[1]?.replaceAll(',', '')),
    clicks: Number(/data-total="clicks">([\d,]+)</.exec(body)?.[1]?.replaceAll(',', '')),
  });

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    [own] = await t.addCampaigns([campaign({ title: 'Harbour lights' })], 'Own Ads');
    [foreign] = await t.addCampaigns([campaign({ title: 'Secret launch' })], 'Other Ads');
    ownAdvertiser = (await t.campaigns.get(own!)).advertiserId;
    otherPartner = (await t.partners.createPartner('Quiet Partner')).id;
    const event = (campaignId: number) => ({ campaignId, placement: 'header_banner', location: 'US' });
    for (let i = 0; i < 3; i++) expect((await t.track('impression', event(own!))).statusCode).toBe(200);
    expect((await t.track('click', event(own!))).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await t.track('impression', event(foreign!))).statusCode).toBe(200);
  });
  afterAll(async () => t?.close());

  it("shows an advertiser its own campaigns' figures, by campaign, and nothing of another's", async () => {
    const browser = await person(`adv-${engine}@example.com`, `advertiser:${ownAdvertiser}`);
    const page = await browser.get('/reports?window=hour');
    expect(page.status).toBe(200);
    expect(totals(page.body)).toEqual({ impressions: 3, clicks: 1 });
    expect(page.body).toContain('Harbour lights');
    expect(page.body).not.toContain('Secret launch');
    // Naming another advertiser's campaign finds nothing rather than telling it exists.
    const probe = await browser.get(`/reports?window=hour&campaign=${foreign}`);
    expect(probe.status).toBe(200);
    expect(totals(probe.body)).toEqual({ impressions: 0, clicks: 0 });
    expect(probe.body).toContain('Once your campaigns are approved and running');
  });

  it('shows a partner its own traffic of every campaign, and another partner none of it', async () => {
    const partnerId = (await t.partners.listPartners()).find((p) => p.name === 'Test Partner')!.id;
    const partner = await person(`partner-${engine}@example.com`, `partner:${partnerId}`);
    const page = await partner.get('/reports?window=day&breakdown=campaign');
    expect(totals(page.body)).toEqual({ impressions: 8, clicks: 1 });
    expect(page.body).toContain('Delivery report');
    const other = await person(`quiet-${engine}@example.com`, `partner:${otherPartner}`);
    const empty = await other.get('/reports?window=day');
    expect(totals(empty.body)).toEqual({ impressions: 0, clicks: 0 });
    expect(empty.body).toContain('the Integration page shows how to send them');
  });

  it('serves the live part alone, and sends an ended session to sign in instead of swapping a page in', async () => {
    const browser = await person(`live-${engine}@example.com`, `advertiser:${ownAdvertiser}`);
    const fragment = await browser.get('/reports/figures?window=hour');
    expect(fragment.status).toBe(200);
    expect(fragment.body.startsWith('<section id="live-figures"')).toBe(true);
    expect(fragment.body).toContain('hx-trigger="every 2s"');
    expect(totals(fragment.body)).toEqual({ impressions: 3, clicks: 1 });
    const signedOut = await new BrowserClient(t.url).get('/reports/figures?window=hour');
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers['hx-redirect']).toBe(
      `/sign-in?next=${encodeURIComponent('/reports?window=hour')}`,
    );
  });

  it('exports the same report as CSV', async () => {
    const browser = await person(`csv-${engine}@example.com`, `advertiser:${ownAdvertiser}`);
    const csv = await browser.get('/reports.csv?window=hour&breakdown=campaign');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="placard-hour-campaign-/);
    expect(csv.body.split('\r\n')).toEqual([
      'period,campaign,campaignName,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,currency',
      `2026-06-01T12:34+00:00,${own},Harbour lights,3,1,0.333333,0,0,0,0,0.00,0.00,0.00,USD`,
      '',
    ]);
  });

  it('names each id in the CSV export beside it, as far as the person may see it', async () => {
    const operator = await person(`csv-operator-${engine}@example.com`, 'operator');
    const byAdvertiser = await operator.get('/reports.csv?window=hour&breakdown=advertiser');
    const foreignAdvertiser = (await t.campaigns.get(foreign!)).advertiserId;
    expect(byAdvertiser.body.split('\r\n')).toEqual([
      'period,advertiser,advertiserName,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency',
      `2026-06-01T12:34+00:00,${ownAdvertiser},Own Ads,3,1,0.333333,0,0,0,0,0.00,0.00,0.00,0.00,0.00,USD`,
      `2026-06-01T12:34+00:00,${foreignAdvertiser},Other Ads,5,0,0,0,0,0,0,0.00,0.00,,0.00,0.00,USD`,
      '',
    ]);
    // A partner's traffic shows other advertisers' campaigns: their ids, never their titles.
    const partnerId = (await t.partners.listPartners()).find((p) => p.name === 'Test Partner')!.id;
    const partner = await person(`csv-partner-${engine}@example.com`, `partner:${partnerId}`);
    const byCampaign = await partner.get('/reports.csv?window=hour&breakdown=campaign');
    expect(byCampaign.body).toContain(`2026-06-01T12:34+00:00,${own},,3,1,`);
    expect(byCampaign.body).not.toContain('Harbour lights');
    expect(byCampaign.body).not.toContain('Secret launch');
    const operatorByPartner = await operator.get('/reports.csv?window=hour&breakdown=partner');
    expect(operatorByPartner.body).toContain(`2026-06-01T12:34+00:00,${partnerId},Test Partner,8,1,`);
  });

  it('shows partner earnings to the operator and the partner, the margin to the operator, neither to the advertiser', async () => {
    const partnerId = (await t.partners.listPartners()).find((p) => p.name === 'Test Partner')!.id;
    const seen = async (email: string, account: string) => {
      const body = (await (await person(email, account)).get('/reports?window=hour')).body;
      return ['earnings', 'margin'].filter((total) => body.includes(`data-total="${total}"`));
    };
    expect(await seen(`sees-operator-${engine}@example.com`, 'operator')).toEqual(['earnings', 'margin']);
    expect(await seen(`sees-partner-${engine}@example.com`, `partner:${partnerId}`)).toEqual(['earnings']);
    expect(await seen(`sees-advertiser-${engine}@example.com`, `advertiser:${ownAdvertiser}`)).toEqual([]);
  });

  it('shows the partner and the advertiser what was not billed, by reason', async () => {
    // A click with no impression of its key, campaign and placement before it is not billable (D15).
    const [lonely] = await t.addCampaigns([campaign({ title: 'Lonely click' })], 'Own Ads');
    const click = await t.track('click', { campaignId: lonely, placement: 'header_banner', location: 'US' });
    expect(click.statusCode).toBe(200);
    const partnerId = (await t.partners.listPartners()).find((p) => p.name === 'Test Partner')!.id;
    const partner = await person(`reasons-${engine}@example.com`, `partner:${partnerId}`);
    const page = await partner.get('/reports?window=hour&breakdown=reason');
    expect(page.status).toBe(200);
    const row = /<tr><th scope="row">click without impression<\/th>(.*?)<\/tr>/.exec(page.body)?.[1] ?? '';
    // Not billed: no billable impression or click, one event answered but not charged, and no spend.
    expect([...row.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((cell) => cell[1])).toEqual([
      '0',
      '0',
      '–',
      '1',
      // With a viewer: no billable impression to share.
      '–',
      '0.00',
      '–',
      '–',
      // The partner's earnings (its own to read); no margin column.
      '0.00',
    ]);
    expect(page.body).toContain('billable (no reason)');
    const advertiser = await person(`reasons-adv-${engine}@example.com`, `advertiser:${ownAdvertiser}`);
    expect((await advertiser.get('/reports?window=hour&breakdown=reason')).body).toContain(
      'click without impression',
    );
  });

  it('names what is wrong with a report it cannot make, keeping the form as chosen', async () => {
    const browser = await person(`wrong-${engine}@example.com`, `advertiser:${ownAdvertiser}`);
    const zone = await browser.get('/reports?timeZone=Mars%2FOlympus');
    expect(zone.status).toBe(400);
    expect(zone.body).toContain('timeZone must be an IANA time zone');
    expect(zone.body).toContain('value="Mars/Olympus"');
    const breakdown = await browser.get('/reports?breakdown=partner');
    expect(breakdown.status).toBe(400);
    expect(breakdown.body).toContain(
      'breakdown must be one of: campaign, placement, country, device, reason',
    );
  });

  it('shows spend, eCPM and eCPC in the currency, right-aligned in digits of one width', async () => {
    const [perThousand, perClick] = await t.addCampaigns(
      [campaign({ title: 'Per thousand' }), campaign({ title: 'Per click' })],
      'Priced Ads',
    );
    const since = now - 60 * 60_000;
    await setCampaignPrice(t.store, perThousand, { model: 'cpm', amountMicros: 2_000_000, since });
    await setCampaignPrice(t.store, perClick, { model: 'cpc', amountMicros: 1_234_567, since });
    const source = await newPartnerKey(t.store, `Priced partner ${engine}`, `priced-${engine}`);
    const event = (campaignId: number, kind: 'impression' | 'click' = 'impression') =>
      trackedEvent({ ...source, campaignId, kind, occurredAt: now - 60_000, priced: true });
    // 3 impressions at a CPM of 2.00 cost 6,000 micros; 2 clicks at 1.234567 cost 2,469,134.
    await t.store.insertEvents([
      ...[1, 2, 3].map(() => event(perThousand)),
      event(perClick),
      event(perClick),
      event(perClick, 'click'),
      event(perClick, 'click'),
    ]);
    const advertiserId = (await t.campaigns.get(perThousand)).advertiserId;
    const browser = await person(`money-${engine}@example.com`, `advertiser:${advertiserId}`);
    const page = await browser.get('/reports?window=hour&breakdown=campaign');
    expect(page.status).toBe(200);
    // 2,475,134 micros in all: 495,026,800 per thousand of the 5 impressions, 1,237,567 per click.
    expect(page.body).toMatch(/<dd data-total="spend" class="money">USD 2\.48<\/dd>/);
    expect(page.body).toContain('Amounts in USD');
    for (const header of ['Spend', 'eCPM', 'eCPC'])
      expect(page.body).toContain(`<th scope="col" class="money">${header} (USD)</th>`);
    /** The amounts of a campaign's row of the breakdown. */
    const row = (title: string) => {
      const cells = new RegExp(`<tr><th scope="row">${title}</th>(.*?)</tr>`).exec(page.body)?.[1] ?? '';
      return [...cells.matchAll(/<td class="money"[^>]*>([^<]*)<\/td>/g)].map((cell) => cell[1]);
    };
    expect(row('Per thousand')).toEqual(['0.01', '2.00', '–']);
    expect(row('Per click')).toEqual(['2.47', '1,234.57', '1.23']);
    // The hour's series has the totals: the amounts of the whole report, exact in their micros.
    expect(page.body).toContain('<td class="money" data-micros="2475134">2.48</td>');
    expect(page.body).toContain('<td class="money" data-micros="495026800">495.03</td>');
    expect(page.body).toContain('<td class="money" data-micros="1237567">1.24</td>');
    const css = await browser.get('/assets/dashboard.css');
    expect(css.body).toMatch(/td\.money,[^}]*text-align: right;\s*font-variant-numeric: tabular-nums;/);
  });
});

/** Reports by dates in the report's time zone, compared with the period before, and their links. */
describe('dashboard reports by dates', () => {
  let t: TestApp;
  let now = Date.parse('2026-05-31T12:00:00Z');
  let browser: BrowserClient;

  /** A total as shown, and its change on the previous period. */
  const total = (body: string, name: string) => ({
    value: new RegExp(`data-total="${name}">([^<]*)<`).exec(body)?.[1],
    change: new RegExp(`data-change="${name}">([^<]*) <`).exec(body)?.[1],
  });

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    const [id] = await t.addCampaigns([campaign({ title: 'Dated' })], 'Dated Ads');
    const event = { campaignId: id, placement: 'header_banner', location: 'US' };
    // 31 May in Paris (14:00).
    for (let i = 0; i < 2; i++) expect((await t.track('impression', event)).statusCode).toBe(200);
    // 1 June in Paris (00:30), still 31 May in UTC.
    now = Date.parse('2026-05-31T22:30:00Z');
    for (let i = 0; i < 4; i++) expect((await t.track('impression', event)).statusCode).toBe(200);
    expect((await t.track('click', event)).statusCode).toBe(200);
    now = Date.parse('2026-06-02T10:00:00Z');
    const advertiser = (await t.campaigns.get(id)).advertiserId;
    browser = await signedInPerson(t, now, {
      email: 'dates@example.com',
      account: `advertiser:${advertiser}`,
      role: 'reporter',
    });
  });
  afterAll(async () => t?.close());

  it("shows one local day by hour in the report's time zone, compared with the day before", async () => {
    const page = await browser.get(
      '/reports?window=dates&from=2026-06-01&to=2026-06-01&timeZone=Europe/Paris',
    );
    expect(page.status).toBe(200);
    expect(total(page.body, 'impressions')).toEqual({ value: '4', change: '+100%' });
    expect(total(page.body, 'clicks')).toEqual({ value: '1', change: 'none before' });
    expect(page.body).toContain(
      '2026-06-01 (Europe/Paris), compared with the period of the same length before it, 2026-05-31.',
    );
    expect(page.body.match(/<tr data-start=/g)).toHaveLength(24);
    // The date fields show the dates, and the period its choice.
    expect(page.body).toContain('name="from" type="date" value="2026-06-01"');
    expect(page.body).toMatch(/<option value="dates" selected>/);
    // A day that is over does not change: nothing asks for it again.
    expect(page.body).not.toContain('hx-trigger');

    // The same dates in UTC: the late events fall on 31 May.
    const utc = await browser.get('/reports?from=2026-06-01&to=2026-06-01');
    expect(total(utc.body, 'impressions')).toEqual({ value: '0', change: '-100%' });
  });

  it('covers several days by day, today included and still refreshing', async () => {
    const page = await browser.get(
      '/reports?window=dates&from=2026-05-30&to=2026-06-02&timeZone=Europe/Paris',
    );
    expect(page.status).toBe(200);
    expect(total(page.body, 'impressions')).toEqual({ value: '6', change: 'none before' });
    expect(page.body.match(/<tr data-start=/g)).toHaveLength(4);
    expect(page.body).toContain('2026-05-30 to 2026-06-02 (Europe/Paris)');
    expect(page.body).toContain('2026-05-26 to 2026-05-29.');
    expect(page.body).toContain('hx-trigger="every 2s"');
    const csv = await browser.get(
      '/reports.csv?window=dates&from=2026-05-30&to=2026-06-02&timeZone=Europe/Paris',
    );
    expect(csv.headers['content-disposition']).toMatch(
      /filename="placard-2026-05-30-to-2026-06-02-campaign-/,
    );
    const [header, ...rows] = csv.body
      .split('\r\n')
      .slice(0, -1)
      .map((row) => row.split(','));
    const column = (name: string) => header.indexOf(name);
    expect(rows.map((row) => [row[0], row[column('impressions')]])).toEqual([
      ['2026-05-31', '2'],
      ['2026-06-01', '4'],
    ]);
  });

  it('gives a link with every choice that reproduces the report', async () => {
    const page = await browser.get(
      '/reports?window=dates&from=2026-06-01&to=2026-06-01&timeZone=Europe/Paris&breakdown=country&placement=header_banner',
    );
    const link = /id="report-link"[^>]*value="([^"]+)"/.exec(page.body)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toBe(
      'http://127.0.0.1:8080/reports?window=dates&from=2026-06-01&to=2026-06-01&breakdown=country&timeZone=Europe%2FParis&placement=header_banner',
    );
    const again = await browser.get(new URL(link!).pathname + new URL(link!).search);
    expect(total(again.body, 'impressions')).toEqual(total(page.body, 'impressions'));
    expect(again.body).toContain('<th scope="row">US</th>');
    // A rolling period's link says it moves with the clock.
    expect((await browser.get('/reports?window=week')).body).toContain('for fixed days, choose the dates');
  });

  it('names what is wrong with dates it cannot show, keeping them as typed', async () => {
    const backwards = await browser.get('/reports?window=dates&from=2026-06-02&to=2026-06-01');
    expect(backwards.status).toBe(400);
    expect(backwards.body).toContain('to must be the same day as from or later');
    expect(backwards.body).toContain('name="from" type="date" value="2026-06-02"');
    expect(backwards.body).toMatch(/<option value="dates" selected>/);
    const long = await browser.get('/reports?from=2025-01-01&to=2026-06-01');
    expect(long.status).toBe(400);
    expect(long.body).toContain('to must be at most 366 days after from');
    expect((await browser.get('/reports?from=2026-02-30')).body).toContain(
      'from must be a date (YYYY-MM-DD)',
    );
  });
});
