import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DESKTOP, fillLabelled, fillSignIn, PHONE, shootBothSizes } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

/**
 * The operator's campaign and key forms and the campaigns list in Debian's Chromium, against the
 * built server started with the demo data: what the management API allows, done from the pages.
 */
describe('campaigns and keys in a real browser', () => {
  const demo = demoInBrowser('campaigns');
  const consoleErrors: string[] = [];

  let operatorContext: BrowserContext | undefined;

  /** A page signed in as the demo operator (one sign-in, reused); without scripts, a browser of its own. */
  async function operatorPage(viewport = DESKTOP, javaScriptEnabled = true): Promise<Page> {
    const reuse = javaScriptEnabled ? operatorContext : undefined;
    const context = reuse ?? (await demo.newContext({ viewport, javaScriptEnabled }));
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    page.setDefaultTimeout(8_000);
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    await page.goto(`${demo.server.url}/campaigns`);
    if (reuse) return page;
    await fillSignIn(page, demo.demoUser('operator'));
    await page.waitForURL((url) => url.pathname === '/campaigns');
    if (javaScriptEnabled) operatorContext = context;
    return page;
  }

  /** Screenshots of `page` at desktop and phone sizes, each checked by axe and for sideways scrolling. */
  const shoot = (page: Page, name: string) => shootBothSizes(page, demo.shots, name);

  let createdId = 0;

  it('the operator creates a campaign for an advertiser it chooses, with priority and weight', async () => {
    const page = await operatorPage();
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.waitForURL(/\/campaigns\/new$/);
    const advertiser = page.getByLabel('Advertiser');
    const choice = await advertiser.locator('option').nth(1).getAttribute('value');
    await advertiser.selectOption(choice);
    await fillLabelled(page, {
      Title: 'Operator’s harbour offer',
      'Destination URL': 'https://harbour.example/offer',
      'Daily impression cap': '1000',
      Priority: '5',
      Weight: '3',
    });
    await page.getByRole('checkbox', { name: /header_banner/ }).check();
    await page.getByRole('button', { name: 'Save draft and preview' }).click();
    await page.waitForURL(/\/campaigns\/\d+$/);
    createdId = Number(/\/campaigns\/(\d+)$/.exec(page.url())![1]);
    const created = await demo.admin<{
      advertiserId: number;
      priority: number;
      weight: number;
      status: string;
    }>('GET', `/campaigns/${createdId}`);
    expect(created).toMatchObject({ advertiserId: Number(choice), priority: 5, weight: 3, status: 'draft' });
    await page.goto(`${demo.server.url}/campaigns/new`);
    expect(await shoot(page, 'campaign-new-operator')).toEqual([]);
  });

  it('the operator sets its hours of the week from the keyboard, and a day that cannot be read is named', async () => {
    const page = await operatorPage();
    await page.goto(`${demo.server.url}/campaigns/${createdId}/edit`);
    await page.getByLabel('Monday').focus();
    await page.keyboard.type('9-17');
    // Tab goes from one day to the next.
    await page.keyboard.press('Tab');
    await page.keyboard.type('9 to 5');
    await page.getByLabel('Saturday').fill('10-14, 18-22');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(
      page.getByText('Tuesday must be hour ranges such as 9-17').first().isVisible(),
    ).resolves.toBe(true);
    await expect(page.getByLabel('Tuesday').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await shoot(page, 'campaign-hours-refused')).toEqual([]);
    // The refused form's answer is a 422, which the browser logs: expected here, and only here.
    const refusedAnswer = consoleErrors.findIndex((error) => /\/edit: .* 422 /.test(error));
    expect(refusedAnswer).toBeGreaterThanOrEqual(0);
    consoleErrors.splice(refusedAnswer, 1);
    await page.getByLabel('Tuesday').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(new RegExp(`/campaigns/${createdId}$`));
    await expect(page.locator('main').innerText()).resolves.toContain('mon 9-17; sat 10-14,18-22');
    const saved = await demo.admin<{ schedule: unknown }>('GET', `/campaigns/${createdId}`);
    expect(saved.schedule).toEqual({
      mon: [[9, 17]],
      sat: [
        [10, 14],
        [18, 22],
      ],
    });
    await page.goto(`${demo.server.url}/campaigns/${createdId}/edit`);
    await expect(page.getByLabel('Saturday').inputValue()).resolves.toBe('10-14, 18-22');
    expect(await shoot(page, 'campaign-hours')).toEqual([]);
  });

  it('the operator finds it by name and status, sorts the list from its headers, and the view is in the address', async () => {
    const page = await operatorPage();
    expect(await shoot(page, 'campaigns-list')).toEqual([]);
    await page.getByLabel('Name or number').fill('harbour');
    await page.getByLabel('Status').selectOption('draft');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/status=draft/);
    expect(new URL(page.url()).searchParams.get('q')).toBe('harbour');
    const row = page.getByRole('row').filter({ hasText: 'Operator’s harbour offer' });
    await expect(row.textContent()).resolves.toContain('0 of 1,000 impressions today');
    await page.getByRole('link', { name: 'Campaign', exact: true }).click();
    await page.waitForURL(/sort=name/);
    await page.getByRole('link', { name: 'Campaign', exact: true }).click();
    await page.waitForURL(/order=desc/);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: 'harbour',
      status: 'draft',
      sort: 'name',
      order: 'desc',
    });
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    expect(await shoot(page, 'campaigns-list-filtered')).toEqual([]);

    // Sorted by delivery over the demo's campaigns, with no script at all.
    const plain = await operatorPage(PHONE, false);
    await plain.goto(`${demo.server.url}/campaigns?sort=impressions`);
    await plain.getByLabel('Status').selectOption('running');
    await plain.getByRole('button', { name: 'Show' }).click();
    await plain.waitForURL(/status=running/);
    expect(new URL(plain.url()).searchParams.get('sort')).toBe('impressions');
    await expect(plain.getByRole('row').count()).resolves.toBeGreaterThan(1);
    // Axe runs as a script: the same view, in the browser with scripts, is what it checks.
    await page.goto(plain.url());
    expect(await shoot(page, 'campaigns-list-by-delivery')).toEqual([]);
  });

  it('the operator changes a key’s rate limits', async () => {
    const page = await operatorPage();
    await page.goto(`${demo.server.url}/keys`);
    const summary = page
      .getByText('Rate limits', { exact: true })
      .locator('xpath=ancestor-or-self::summary')
      .first();
    await summary.click();
    const form = page.locator('details.limits[open] form').first();
    await form.getByLabel('Fetches per second').fill('50');
    await form.getByLabel('Fetch burst').fill('80');
    expect(await shoot(page, 'keys-rate-limits')).toEqual([]);
    const action = await form.getAttribute('action');
    await form.getByRole('button').click();
    await page.waitForURL(`${demo.server.url}/keys`);
    const keyId = Number(/\/keys\/(\d+)\/rate-limits/.exec(action!)![1]);
    const key = await demo.admin<{ rateLimits: Record<string, number | null> }>('GET', `/keys/${keyId}`);
    expect(key.rateLimits).toMatchObject({ fetchRate: 50, fetchBurst: 80 });
    await expect(page.locator('main').innerText()).resolves.toContain('fetch 50/s, burst 80');
    expect(consoleErrors).toEqual([]);
  });
});
