import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { axeFindings, fillSignIn, sidewaysScroll } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

const SCREENS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * An advertiser's budget page in Debian's Chromium, against the built server with the demo data:
 * the operator sets both budgets and reads the spend against them, at a desktop's and a phone's
 * size, with no sideways scroll and without an accessibility problem (D14).
 */
describe("an advertiser's budget page in a real browser", () => {
  const demo = demoInBrowser('advertiser-budget');

  it.each(SCREENS)('sets and shows the budgets on a $name screen, axe-clean', async (screen) => {
    const advertisers = await demo.admin<Array<{ id: number; name: string }>>('GET', '/advertisers');
    const page = await (await demo.newContext({ viewport: screen })).newPage();
    page.setDefaultTimeout(8_000);
    await page.goto(`${demo.server.url}/sign-in`);
    await fillSignIn(page, demo.demoUser('operator'));
    await page.waitForURL((url) => url.pathname === '/review');
    await page.goto(`${demo.server.url}/advertisers/${advertisers[0].id}/budget`);
    await page.getByLabel(/Total budget/).fill('2500.00');
    await page.getByLabel(/Monthly budget/).fill('900');
    await page.getByRole('button', { name: 'Set the budgets' }).click();
    await page.waitForLoadState();
    await expect(page.getByRole('table').textContent()).resolves.toContain('USD 2,500.00');
    expect(await sidewaysScroll(page)).toBe(0);
    expect((await axeFindings(page)).map((finding) => `${finding.id} (${finding.impact})`)).toEqual([]);
    await page.screenshot({
      path: path.join(demo.shots, `advertiser-budget-${screen.name}.png`),
      fullPage: true,
    });
    await page.context().close();
  });
});
