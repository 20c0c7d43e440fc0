import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeFindings, fillSignIn, sidewaysScroll } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

/** A date `days` before today, UTC, as the date fields take it. */
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

/** The reports page by dates in Chromium, with and without JavaScript, on a desktop and a phone. */
describe('reports by dates in a real browser', () => {
  const demo = demoInBrowser('reports');

  async function signIn(viewport: { width: number; height: number }, javaScriptEnabled: boolean) {
    const context = await demo.newContext({ viewport, javaScriptEnabled });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: demo.server.url });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    await page.goto(`${demo.server.url}/sign-in`);
    await fillSignIn(page, demo.demoUser('advertiser'));
    await page.waitForURL((url) => url.pathname !== '/sign-in');
    return page;
  }

  /** Chooses dates on the report form and shows them, as a person does. */
  async function showDates(page: Page, from: string, to: string) {
    await page.goto(`${demo.server.url}/reports`);
    await page.getByLabel('Period').selectOption({ label: 'Between two dates' });
    await page.getByLabel('From').fill(from);
    await page.getByLabel('To', { exact: true }).fill(to);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/window=dates/);
  }

  it('shows the dates chosen, compared with the days before, with a link that copies and reopens it', async () => {
    const page = await signIn({ width: 1280, height: 800 }, true);
    const [from, to] = [daysAgo(6), daysAgo(0)];
    await showDates(page, from, to);
    const url = new URL(page.url());
    expect(url.searchParams.get('from')).toBe(from);
    expect(url.searchParams.get('to')).toBe(to);
    await expect(page.locator('#series tbody tr').count()).resolves.toBe(7);
    await expect(page.locator('p.period').textContent()).resolves.toContain(`${from} to ${to} (UTC)`);
    await expect(page.locator('[data-change="impressions"]').textContent()).resolves.toMatch(
      /(%|no change|none before) \(previous period: [\d,]+\)/,
    );
    await page.screenshot({ path: path.join(demo.shots, 'reports-dates-desktop.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);

    const link = await page.getByLabel('Link to this report').inputValue();
    await page.getByRole('button', { name: 'Copy link' }).click();
    // The copy is asynchronous (the clipboard answers a promise): wait for the status, don't read it at once.
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor({ timeout: 10_000 });
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(link);
    await page.goto(`${demo.server.url}${new URL(link).pathname}${new URL(link).search}`);
    await expect(page.getByLabel('From').inputValue()).resolves.toBe(from);
    await expect(page.getByLabel('Period').inputValue()).resolves.toBe('dates');
  });

  it('fits a phone and passes axe-core there', async () => {
    const page = await signIn({ width: 390, height: 844 }, true);
    await showDates(page, daysAgo(1), daysAgo(0));
    await page.screenshot({ path: path.join(demo.shots, 'reports-dates-phone.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);
    expect(await sidewaysScroll(page)).toBe(0);
  });

  it('works with JavaScript off: the form, the comparison and the link, without a copy button', async () => {
    const page = await signIn({ width: 1280, height: 800 }, false);
    await showDates(page, daysAgo(0), daysAgo(0));
    await expect(page.locator('#series tbody tr').count()).resolves.toBe(24);
    await expect(page.locator('[data-change="clicks"]').count()).resolves.toBe(1);
    await expect(page.getByLabel('Link to this report').inputValue()).resolves.toContain('window=dates');
    await expect(page.getByRole('button', { name: 'Copy link' }).isHidden()).resolves.toBe(true);
  });
});
