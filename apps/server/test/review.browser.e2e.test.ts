import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeFindings, fillSignIn, sidewaysScroll } from './helpers/browser-checks.js';
import { WHOLE_CAMPAIGN } from './helpers/dashboard-fixtures.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

const SCREENS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * The operator's review queue and Users page in Debian's Chromium, against the built server with
 * the demo data: a new campaign and an edit of an approved one, each shown whole; each user's
 * account by name; at a desktop's and a phone's size, without an accessibility problem (D14).
 */
describe('the review queue and the users page in a real browser', () => {
  const demo = demoInBrowser('review');

  beforeAll(async () => {
    const admin = demo.admin;
    const advertisers = await admin<Array<{ id: number; name: string }>>('GET', '/advertisers');
    const created = await admin('POST', '/campaigns', { advertiserId: advertisers[0].id, ...WHOLE_CAMPAIGN });
    await admin('POST', `/campaigns/${created.id}/submit`);
    // An approved demo campaign edited since: the queue shows what changed.
    const running = await admin<Array<{ id: number; title: string }>>('GET', '/campaigns?status=running');
    await admin('PATCH', `/campaigns/${running[0].id}`, {
      title: `${running[0].title}, now with free returns`,
      countries: ['US', 'CA', 'GB'],
      caps: { impressionsDaily: 2000 },
    });
  });

  async function operatorPage(viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await demo.newContext({ viewport })).newPage();
    page.setDefaultTimeout(8_000);
    await page.goto(`${demo.server.url}/sign-in`);
    await fillSignIn(page, demo.demoUser('operator'));
    await page.waitForURL((url) => url.pathname === '/review');
    return page;
  }

  it.each(SCREENS)(
    "names each user's account on the Users page on a $name screen, axe-clean",
    async (screen) => {
      const page = await operatorPage(screen);
      await page.goto(`${demo.server.url}/users`);
      const advertiserUser = demo.demoUser('advertiser');
      const row = page.getByRole('row').filter({ hasText: advertiserUser.email });
      // The demo's advertiser user belongs to a named advertiser: its name, then its label.
      const account = row.locator('td').filter({ hasText: /advertiser:\d+/ });
      await expect(account.textContent()).resolves.toMatch(/^\S[^\n]* advertiser:\d+$/);
      expect(await sidewaysScroll(page)).toBe(0);
      expect((await axeFindings(page)).map((finding) => `${finding.id} (${finding.impact})`)).toEqual([]);
      await page.screenshot({ path: path.join(demo.shots, `users-${screen.name}.png`), fullPage: true });
      await page.context().close();
    },
  );

  it.each(SCREENS)(
    'shows each campaign whole with its changes on a $name screen, axe-clean',
    async (screen) => {
      const page = await operatorPage(screen);
      const main = page.locator('main');
      const fresh = main.getByRole('listitem').filter({ hasText: WHOLE_CAMPAIGN.title });
      const freshText = await fresh.innerText();
      expect(freshText).toContain('New campaign, never approved.');
      expect(freshText).toContain(WHOLE_CAMPAIGN.description);
      expect(freshText).toContain('2026-07-01 09:00 Europe/Paris to 2026-07-31 22:00 Europe/Paris');
      expect(freshText).toContain(
        '500 impressions and no clicks a day; no impressions and 40 clicks in total',
      );
      // The click-through URL is there to read, not to follow.
      await expect(fresh.getByRole('link').count()).resolves.toBe(0);
      const edited = main.getByRole('listitem').filter({ hasText: 'now with free returns' }).first();
      const editedText = await edited.innerText();
      expect(editedText).toContain('Changed since its last approval');
      expect(editedText).toMatch(/Countries: .+ → CA, GB, US/);

      expect(await sidewaysScroll(page)).toBe(0);
      expect((await axeFindings(page)).map((finding) => `${finding.id} (${finding.impact})`)).toEqual([]);
      await page.screenshot({ path: path.join(demo.shots, `review-${screen.name}.png`), fullPage: true });
      await fresh.screenshot({ path: path.join(demo.shots, `review-${screen.name}-new.png`) });
      await edited.screenshot({ path: path.join(demo.shots, `review-${screen.name}-changed.png`) });
      await page.context().close();
    },
  );
});
