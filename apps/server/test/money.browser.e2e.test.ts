import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { axeFindings, fillSignIn, sidewaysScroll } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

/** The operator's money page in Chromium, on the demo's priced traffic, on a desktop and a phone. */
describe('the money page in a real browser', () => {
  const demo = demoInBrowser('money');

  async function signIn(
    viewport: { width: number; height: number },
    kind: 'operator' | 'partner' = 'operator',
  ) {
    const context = await demo.newContext({ viewport });
    const page = await context.newPage();
    page.setDefaultTimeout(8_000);
    await page.goto(`${demo.server.url}/sign-in`);
    await fillSignIn(page, demo.demoUser(kind));
    await page.waitForURL((url) => url.pathname !== '/sign-in');
    return page;
  }

  /** An amount as the page shows it (`1,234.56 USD` or `1,234.56`), in micros. */
  const micros = (text: string) => Math.round(Number(text.replace(/[^\d.]/g, '')) * 1e6);

  it('shows this month’s revenue, payouts and margin, which add up, by advertiser and partner', async () => {
    const page = await signIn({ width: 1280, height: 800 });
    await page.getByRole('link', { name: 'Money' }).click();
    await page.waitForURL(/\/money$/);
    const total = async (name: string) => (await page.locator(`[data-total="${name}"]`).textContent()) ?? '';
    const [revenue, earnings, margin] = await Promise.all(['revenue', 'earnings', 'margin'].map(total));
    expect(micros(revenue)).toBeGreaterThan(0);
    // Shown in cents, each rounded on its own: within a cent of adding up; exactly, in micros.
    expect(Math.abs(micros(revenue) - micros(earnings) - micros(margin))).toBeLessThanOrEqual(10_000);
    const exact = async (name: string) =>
      Number(await page.locator(`[data-total="${name}"]`).getAttribute('data-micros'));
    const [spend, earned, kept] = await Promise.all(['revenue', 'earnings', 'margin'].map(exact));
    expect(spend).toBeGreaterThan(0);
    expect(spend - earned).toBe(kept);
    expect(Math.abs(spend - micros(revenue))).toBeLessThanOrEqual(5_000);
    await expect(total('margin-percent')).resolves.toMatch(/^\d+\.\d\d%$/);
    // Amounts right-aligned in digits of one width.
    const style = await page
      .locator('[data-total="revenue"]')
      .evaluate((cell) => [getComputedStyle(cell).textAlign, getComputedStyle(cell).fontVariantNumeric]);
    expect(style).toEqual(['right', 'tabular-nums']);
    await expect(
      page.getByRole('region', { name: 'Money by advertiser' }).locator('tbody tr').count(),
    ).resolves.toBeGreaterThan(0);
    await expect(page.getByRole('region', { name: 'Money by partner' }).textContent()).resolves.toContain(
      '%',
    );
    await expect(
      page.getByRole('region', { name: 'Money by month' }).locator('tbody tr').count(),
    ).resolves.toBe(12);
    await page.screenshot({ path: path.join(demo.shots, 'money-desktop.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);

    // The operator's reports: partner earnings beside the spend, and the margin.
    await page.goto(`${demo.server.url}/reports?window=month&breakdown=partner`);
    await expect(page.locator('[data-total="earnings"]').textContent()).resolves.toMatch(
      /^USD [\d,]+\.\d\d$/,
    );
    await expect(page.locator('#series thead').textContent()).resolves.toMatch(/Partner earnings.*Margin/);
    await page.screenshot({ path: path.join(demo.shots, 'reports-operator-desktop.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);
  });

  it('says what to do in a month without revenue, fits a phone and passes axe-core there', async () => {
    const page = await signIn({ width: 390, height: 844 });
    const before = new Date();
    before.setUTCMonth(before.getUTCMonth() - 6);
    await page.goto(`${demo.server.url}/money?month=${before.toISOString().slice(0, 7)}`);
    await expect(page.locator('#money-figures .empty').textContent()).resolves.toContain(
      'set a price on a campaign',
    );
    await page.screenshot({ path: path.join(demo.shots, 'money-empty-phone.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);
    expect(await sidewaysScroll(page)).toBe(0);
    await page.goto(`${demo.server.url}/money`);
    await page.screenshot({ path: path.join(demo.shots, 'money-phone.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);
    expect(await sidewaysScroll(page)).toBe(0);
  });

  it('shows a partner its earnings this month and last on its home page, with its share history', async () => {
    const page = await signIn({ width: 390, height: 844 }, 'partner');
    expect(new URL(page.url()).pathname).toBe('/keys');
    const months = page.locator('[data-earnings]');
    await expect(months.count()).resolves.toBe(2);
    expect(micros((await months.first().textContent()) ?? '')).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(demo.shots, 'partner-home-phone.png'), fullPage: true });
    expect((await axeFindings(page)).map((finding) => finding.id)).toEqual([]);
    expect(await sidewaysScroll(page)).toBe(0);
    await page.getByRole('link', { name: 'Your revenue share history' }).click();
    await page.waitForURL(/\/partners\/\d+\/revenue-shares$/);
    await expect(page.locator('body').textContent()).resolves.toContain('70.00');
  });

  it('is the operator’s only: a partner is refused and has no link to it', async () => {
    const page = await signIn({ width: 1280, height: 800 }, 'partner');
    await expect(page.getByRole('link', { name: 'Money' }).count()).resolves.toBe(0);
    const answer = await page.goto(`${demo.server.url}/money`);
    expect(answer?.status()).toBe(403);
  });
});
