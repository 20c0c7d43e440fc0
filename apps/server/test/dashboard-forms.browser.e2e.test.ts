import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fillLabelled, fillSignIn, pageProblems } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';

type Kind = 'operator' | 'advertiser' | 'partner';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/**
 * The dashboard's forms, confirmations and lists in Debian's Chromium against the built server with
 * the demo data, on a desktop screen and a phone's, with JavaScript off where a form must work
 * without it (D14).
 */
describe('dashboard forms in a real browser', () => {
  const demo = demoInBrowser('forms');

  /** A new browser signed in as the demo user of `kind`, with scripts on or off. */
  async function signIn(kind: Kind, viewport = DESKTOP, javaScriptEnabled = true): Promise<Page> {
    const page = await (await demo.newContext({ viewport, javaScriptEnabled })).newPage();
    page.setDefaultTimeout(8_000);
    await page.goto(`${demo.server.url}/sign-in`);
    await fillSignIn(page, demo.demoUser(kind));
    await page.waitForURL((url) => url.pathname !== '/sign-in');
    return page;
  }

  async function shoot(page: Page, name: string) {
    await page.screenshot({ path: path.join(demo.shots, `${name}.png`), fullPage: true });
  }

  /** A campaign of the demo advertiser Northwind, as a draft. */
  async function draft(title: string): Promise<number> {
    const advertisers = await demo.admin<Array<{ id: number; name: string }>>('GET', '/advertisers');
    const northwind = advertisers.find((advertiser) => advertiser.name === 'Northwind Outfitters')!;
    const created = await demo.admin<{ id: number }>('POST', '/campaigns', {
      advertiserId: northwind.id,
      title,
      destinationUrl: 'https://northwind.example/offer',
      placements: ['header_banner'],
    });
    return created.id;
  }

  it('archives a campaign after a page that says it is final, without JavaScript, and says it was done', async () => {
    const id = await draft('Offer to archive');
    const page = await signIn('advertiser', DESKTOP, false);
    await page.goto(`${demo.server.url}/campaigns`);
    await page.getByRole('link', { name: 'Archive: Offer to archive' }).click();
    await page.waitForURL(`${demo.server.url}/campaigns/${id}/archive`);
    expect(await page.locator('main').innerText()).toContain('cannot be resumed, edited or submitted again');
    // No axe-core here: it runs as a script, and this browser runs none.
    await shoot(page, 'archive-confirm-desktop');
    await page.getByRole('button', { name: 'Archive for good' }).click();
    await page.waitForURL(`${demo.server.url}/campaigns`);
    await expect(page.getByRole('status').innerText()).resolves.toContain(
      'Campaign “Offer to archive” archived',
    );
    const row = page.getByRole('row').filter({ hasText: 'Offer to archive' });
    await expect(row.textContent()).resolves.toContain('archived');
    await shoot(page, 'archive-done-desktop');
  });

  it('revokes a key on a phone: the Revoke button is on screen, the page asks, the next page says it was done', async () => {
    const page = await signIn('partner', PHONE);
    await page.getByLabel('Label').fill('phone key');
    await page.getByRole('button', { name: 'Create a key' }).click();
    await page.getByRole('link', { name: 'I have stored it' }).click();
    await page.waitForURL(`${demo.server.url}/keys`);
    await shoot(page, 'keys-phone');
    expect(await pageProblems(page)).toEqual([]);
    // Every row's actions are within the screen, with no sideways scrolling to reach them.
    const offScreen = await page.evaluate(() =>
      [...document.querySelectorAll('main td a, main td button')]
        .filter((element) => element.getBoundingClientRect().right > window.innerWidth)
        .map((element) => element.textContent),
    );
    expect(offScreen).toEqual([]);
    const row = page.getByRole('row').filter({ hasText: 'phone key' });
    await row.getByRole('link', { name: /^Revoke key/ }).click();
    await page.waitForURL(/\/keys\/\d+\/revoke$/);
    expect(await page.locator('main').innerText()).toContain('cannot be turned back on');
    expect(await pageProblems(page)).toEqual([]);
    await shoot(page, 'revoke-confirm-phone');
    await page.getByRole('button', { name: 'Revoke for good' }).click();
    await page.waitForURL(`${demo.server.url}/keys`);
    await expect(page.getByRole('status').innerText()).resolves.toMatch(/^Key plc_\w+… revoked/);
    await expect(row.textContent()).resolves.toContain('revoked');
    await shoot(page, 'revoke-done-phone');
  });

  it('keeps a refused form as typed with each problem beside its field, and the summary leads to it', async () => {
    for (const [viewport, size] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const page = await signIn('advertiser', viewport);
      await page.goto(`${demo.server.url}/campaigns/new`);
      await fillLabelled(page, {
        Title: 'Backwards flight',
        'Destination URL': 'https://northwind.example/back',
        Starts: '2030-02-01T09:00',
        Ends: '2030-01-01T09:00',
        'Daily click cap': '-3',
      });
      await page.getByRole('checkbox', { name: /header_banner/ }).check();
      await page.getByRole('button', { name: 'Save draft and preview' }).click();
      await page.getByRole('alert').waitFor();
      await expect(page.getByLabel('Title').inputValue()).resolves.toBe('Backwards flight');
      await expect(page.getByRole('checkbox', { name: /header_banner/ }).isChecked()).resolves.toBe(true);
      await expect(page.getByLabel('Ends').inputValue()).resolves.toBe('2030-01-01T09:00');
      // The field's accessible description is its problem.
      const ends = page.getByRole('textbox', { name: 'Ends' }).or(page.getByLabel('Ends'));
      await expect(ends.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(page.locator('#endAt-problem').innerText()).resolves.toBe('Ends must be after Starts');
      expect(await pageProblems(page)).toEqual([]);
      await shoot(page, `campaign-refused-${size}`);
      await page.getByRole('alert').getByRole('link', { name: 'Ends must be after Starts' }).click();
      expect(new URL(page.url()).hash).toBe('#endAt');
    }
  });

  it('fits every list on a phone, its actions within reach, and names a malformed id in its 404', async () => {
    const visits: Array<[Kind, string]> = [
      ['operator', '/keys'],
      ['operator', '/placements'],
      ['operator', '/partners'],
      ['operator', '/advertisers'],
      ['operator', '/audit'],
      ['operator', '/users'],
      ['operator', '/flags'],
      ['advertiser', '/campaigns'],
      ['advertiser', '/reports'],
    ];
    const problems: string[] = [];
    const pages = new Map<Kind, Page>();
    for (const [kind, pathname] of visits) {
      if (!pages.has(kind)) pages.set(kind, await signIn(kind, PHONE));
      const page = pages.get(kind)!;
      await page.goto(`${demo.server.url}${pathname}`);
      for (const problem of await pageProblems(page)) problems.push(`${kind} ${pathname}: ${problem}`);
      const offScreen = await page.evaluate(() =>
        [...document.querySelectorAll('main td a, main td button, main td input')]
          .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1)
          .map((element) => element.getAttribute('aria-label') ?? element.textContent),
      );
      if (offScreen.length > 0) problems.push(`${kind} ${pathname}: off screen: ${offScreen.join(', ')}`);
      await shoot(page, `phone-${kind}${pathname.replaceAll('/', '-')}`);
    }
    const advertiser = pages.get('advertiser')!;
    // The reports' table of figures scrolls in a frame that ends between two rows, not through one.
    await advertiser.setViewportSize(DESKTOP);
    await advertiser.goto(`${demo.server.url}/reports?window=day`);
    const cut = await advertiser.evaluate(() => {
      const frame = document.querySelector('#series')!.closest('.table-wrap')!;
      const bottom = frame.getBoundingClientRect().bottom;
      return [...frame.querySelectorAll('tr')].some((row) => {
        const box = row.getBoundingClientRect();
        return box.top < bottom - 1 && box.bottom > bottom + 1;
      });
    });
    await shoot(advertiser, 'reports-desktop');
    expect(cut).toBe(false);
    await advertiser.setViewportSize(PHONE);
    const missing = await advertiser.goto(`${demo.server.url}/campaigns/abc`);
    expect(missing?.status()).toBe(404);
    await expect(advertiser.locator('main').innerText()).resolves.toContain('there is no campaign “abc”');
    await shoot(advertiser, 'not-found-phone');
    expect(problems).toEqual([]);
  });
});
