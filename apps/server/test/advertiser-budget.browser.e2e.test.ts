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

  it.each(SCREENS)(
    'shows when a campaign’s and its advertiser’s budgets run out at the current pace on a $name screen, axe-clean',
    async (screen) => {
      // A running campaign priced 1.00 an impression with a daily and a total budget, three
      // impressions of it in the last hour (a pace of 3.00 an hour), and a budget on its advertiser.
      const campaigns = await demo.admin<
        Array<{ id: number; status: string; advertiserId: number; placements: string[] }>
      >('GET', '/campaigns?status=running');
      const running = campaigns.find((campaign) => campaign.status === 'running')!;
      await demo.admin('PATCH', `/campaigns/${running.id}`, {
        price: { model: 'cpm', amountMicros: 1_000_000_000 },
        budget: { totalMicros: 500_000_000, dailyMicros: 10_000_000 },
      });
      await demo.admin('PATCH', `/advertisers/${running.advertiserId}`, {
        budget: { totalMicros: 2_000_000_000 },
      });
      if (screen.name === 'desktop')
        for (let i = 0; i < 3; i++) {
          const tracked = await fetch(`${demo.server.url}/api/v1/campaigns/impression`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${demo.server.summary.demoApiKey!}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify({ campaignId: running.id, placement: running.placements[0] }),
          });
          expect(tracked.status).toBe(200);
        }
      const page = await (await demo.newContext({ viewport: screen })).newPage();
      page.setDefaultTimeout(8_000);
      await page.goto(`${demo.server.url}/sign-in`);
      await fillSignIn(page, demo.demoUser('operator'));
      await page.waitForURL((url) => url.pathname === '/review');
      for (const [where, shot] of [
        [`/campaigns/${running.id}`, 'campaign-budget'],
        [`/advertisers/${running.advertiserId}/budget`, 'advertiser-budget-forecast'],
      ] as const) {
        await page.goto(`${demo.server.url}${where}`);
        const table = page.getByRole('region', { name: /^Budget/ }).getByRole('table');
        await expect(table.textContent()).resolves.toContain('Runs out at the current pace');
        // 497.00 of the total left at 3.00 an hour, and 7.00 of the day's: a date and time, or not today.
        await expect(table.textContent()).resolves.toMatch(
          /\d{4}-\d{2}-\d{2} \d{2}:\d{2}|not at the current pace/,
        );
        expect(await sidewaysScroll(page)).toBe(0);
        expect((await axeFindings(page)).map((finding) => `${finding.id} (${finding.impact})`)).toEqual([]);
        await page.screenshot({ path: path.join(demo.shots, `${shot}-${screen.name}.png`), fullPage: true });
      }
      await page.context().close();
    },
  );
});
