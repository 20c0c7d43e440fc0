import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

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
      'period,campaign,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks',
      `2026-06-01T12:34+00:00,${own},3,1,0.333333,0,0`,
      '',
    ]);
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
    // Not billed: no billable impression or click, one event answered but not charged.
    expect([...row.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((cell) => cell[1])).toEqual(['0', '0', '–', '1']);
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
});
