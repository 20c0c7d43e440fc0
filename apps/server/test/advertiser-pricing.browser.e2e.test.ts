import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeFindings, fillSignIn, shootBothSizes } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

/** What a page needs changed: axe-core's findings of any impact, and sideways scrolling (shootBothSizes). */
async function looked(page: Page, shots: string, name: string): Promise<string[]> {
  const findings = (await axeFindings(page)).map((f) => `${name}: ${f.id} (${f.impact}) ${f.target}`);
  return [...findings, ...(await shootBothSizes(page, shots, name))];
}

/**
 * Advertisers pricing their own campaigns (D18) in Debian's Chromium, against the built server with
 * the demo data: the operator allows the demo advertiser on the advertisers page; its person finds
 * the budget page in the menu and sets a campaign's price on the campaign's page. Each page at a
 * desktop's and a phone's size, with no sideways scroll and without an accessibility problem (D14).
 */
describe('advertisers pricing their campaigns in a real browser', () => {
  const demo = demoInBrowser('advertiser-pricing');

  it('lets the operator allow it and the advertiser’s person set a price on its campaign’s page', async () => {
    const problems: string[] = [];
    const base = demo.server.url;

    // The advertiser's person: its budget page from the menu, and a campaign's price the operator's.
    const advertiser = await (await demo.newContext()).newPage();
    advertiser.setDefaultTimeout(8_000);
    await advertiser.goto(`${base}/sign-in`);
    await fillSignIn(advertiser, demo.demoUser('advertiser'));
    await advertiser.waitForURL((url) => url.pathname !== '/sign-in');
    await advertiser
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Budget' })
      .click();
    await advertiser.waitForURL(/\/advertisers\/\d+\/budget$/);
    const advertiserId = Number(/\/advertisers\/(\d+)\/budget$/.exec(advertiser.url())![1]);
    await expect(advertiser.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/^Budget of /);
    problems.push(...(await looked(advertiser, demo.shots, 'advertiser-budget-from-menu')));
    const campaigns = await demo.admin<Array<{ id: number; advertiserId: number; status: string }>>(
      'GET',
      `/campaigns?advertiser=${advertiserId}`,
    );
    const campaign = campaigns.find((c) => !['completed', 'archived'].includes(c.status))!;
    await advertiser.goto(`${base}/campaigns/${campaign.id}`);
    await expect(advertiser.getByText('The operator sets this campaign’s price.').count()).resolves.toBe(1);
    await expect(advertiser.getByRole('button', { name: 'Set the price' }).count()).resolves.toBe(0);

    // The operator allows it on the advertisers page.
    const operator = await (await demo.newContext()).newPage();
    operator.setDefaultTimeout(8_000);
    await operator.goto(`${base}/sign-in`);
    await fillSignIn(operator, demo.demoUser('operator'));
    await operator.waitForURL((url) => url.pathname === '/review');
    await operator.goto(`${base}/advertisers`);
    const { name } = await demo.admin<{ name: string }>('GET', `/advertisers/${advertiserId}`);
    await operator.getByRole('button', { name: `Allow it: ${name} sets its campaigns’ prices` }).click();
    await operator.waitForLoadState();
    await expect(operator.getByRole('status').textContent()).resolves.toMatch(
      /campaigns are set by the advertiser or the operator/,
    );
    problems.push(...(await looked(operator, demo.shots, 'advertisers-pricing')));
    const pricing = await demo.admin<{ pricing: string }>('GET', `/advertisers/${advertiserId}`);
    expect(pricing.pricing).toBe('advertiser');

    // Now its person sets the price on the campaign's page, in units of the currency.
    await advertiser.reload();
    await advertiser.getByLabel('Price model').selectOption('cpc');
    await advertiser.getByLabel('Price amount').fill('0.45');
    await advertiser.getByRole('button', { name: 'Set the price' }).click();
    await advertiser.waitForLoadState();
    await expect(advertiser.getByRole('status').textContent()).resolves.toContain('CPC USD 0.45');
    await expect(advertiser.getByRole('region', { name: 'Price history' }).textContent()).resolves.toContain(
      'USD 0.45',
    );
    problems.push(...(await looked(advertiser, demo.shots, 'advertiser-campaign-price')));
    expect(problems).toEqual([]);
  });
});
