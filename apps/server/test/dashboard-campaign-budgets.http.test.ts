import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { campaignForm } from './helpers/dashboard-fixtures.js';
import { signedInPerson } from './helpers/people.js';

/**
 * A campaign's budgets in the dashboard (D18): the operator and the campaign's own advertiser set
 * them in units of the currency, read exactly, without sending the campaign back to review; a
 * refused amount is named and what was typed kept; the campaign's page shows the budgets and the
 * spend against them, right-aligned in tabular figures.
 */
describe('campaign budgets in the dashboard', () => {
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
  const edit = (id: number, values: Record<string, string>, who: BrowserClient) =>
    who.submit(`/campaigns/${id}/edit`, `/campaigns/${id}/edit`, values);

  it('lets the operator set budgets in units of the currency and shows them with the spend', async () => {
    const form = await operator.get('/campaigns/new');
    expect(form.body).toContain('<label for="budgetTotal">Total budget</label>');
    expect(form.body).toContain('<label for="budgetDaily">Daily budget</label>');
    const [id] = await t.addCampaigns([campaign({ title: 'Budgeted' })], 'Harbour Ads');
    const base = { ...fields('Budgeted'), priority: '0', weight: '1' };
    const saved = await edit(id, { ...base, budgetTotal: '500', budgetDaily: '1,250.5' }, operator);
    expect(saved.status, saved.body).toBe(303);
    expect(await t.campaigns.get(id)).toMatchObject({
      status: 'running',
      budget: { totalMicros: 500_000_000, dailyMicros: 1_250_500_000 },
    });
    const again = await operator.get(`/campaigns/${id}/edit`);
    expect(again.body).toMatch(/id="budgetTotal"[^>]*value="500.00"/);
    expect(again.body).toMatch(/id="budgetDaily"[^>]*value="1,250.50"/);

    const page = await operator.get(`/campaigns/${id}`);
    expect(page.body).toContain('<h2>Budget</h2>');
    expect(page.body).toContain('<td class="money">USD 500.00</td><td class="money">USD 0.00</td>');
    expect(page.body).toContain('<td class="money">USD 500.00</td><td class="when"></td></tr>');
    expect(page.body).toContain('<th scope="col" class="when">Runs out at the current pace</th>');
    expect(page.body).toContain('<td class="money">USD 1,250.50</td>');

    // Emptied, both are removed.
    expect((await edit(id, { ...base, budgetTotal: '', budgetDaily: '' }, operator)).status).toBe(303);
    expect((await t.campaigns.get(id)).budget).toEqual({ totalMicros: null, dailyMicros: null });
    expect((await operator.get(`/campaigns/${id}`)).body).toContain('<td class="money">none</td>');
  });

  it('lets the advertiser’s people set the budget of their own campaign, which stays running', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Own budget' })], 'Harbour Ads');
    const form = await advertiser.get(`/campaigns/${id}/edit`);
    expect(form.body).toContain('<label for="budgetTotal">Total budget</label>');
    const saved = await edit(id, { ...fields('Own budget'), budgetTotal: '75.25' }, advertiser);
    expect(saved.status, saved.body).toBe(303);
    expect(await t.campaigns.get(id)).toMatchObject({
      status: 'running',
      budget: { totalMicros: 75_250_000, dailyMicros: null },
    });
  });

  it('refuses an amount it cannot read, naming the field and keeping what was typed', async () => {
    const [id] = await t.addCampaigns([campaign({ title: 'Typo' })], 'Harbour Ads');
    const base = { ...fields('Typo, renamed'), priority: '0', weight: '1' };
    for (const [field, amount] of [
      ['budgetTotal', 'ten'],
      ['budgetDaily', '0'],
      ['budgetTotal', '-5'],
    ] as const) {
      const refused = await edit(id, { ...base, [field]: amount }, operator);
      expect(refused.status, amount).toBe(422);
      expect(refused.body).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
      expect(refused.body).toContain(`id="${field}" name="${field}" type="text" value="${amount}"`);
      expect(refused.body).toContain('value="Typo, renamed"');
    }
    expect((await t.campaigns.get(id)).budget).toEqual({ totalMicros: null, dailyMicros: null });
  });
});
