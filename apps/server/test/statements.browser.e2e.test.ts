import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it, beforeAll } from 'vitest';
import { monthName } from '../src/http/dashboard/pages/statements.js';
import { REASONS } from '../src/domain/verdicts.js';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { DESKTOP, fillSignIn, shootBothSizes } from './helpers/browser-checks.js';
import { campaignInput } from './helpers/campaign-input.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

type Kind = 'operator' | 'advertiser' | 'partner';

/** Last month in UTC (the demo's billing time zone): closed, and where this test's money is. */
const today = new Date();
const MONTH_START = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1);
const MONTH = new Date(MONTH_START).toISOString().slice(0, 7);
const MONTH_NAME = monthName(MONTH);
/** When the seeded events happened: the 10th of last month, mid-morning. */
const AT = MONTH_START + 9 * 86_400_000 + 10 * 3_600_000;

/**
 * Monthly statements (D18) in Debian's Chromium against the built server with the demo data, and
 * a month of money written to its store as the server would have tracked it: the operator issues
 * the month, records an adjustment, pays a partner and downloads a statement; an advertiser and a
 * partner each see only their own; every new page passes axe-core at desktop and phone sizes, and a
 * printed statement leaves the menu and the forms out.
 */
describe('statements in a real browser', () => {
  const demo = demoInBrowser('statements');
  const consoleErrors: string[] = [];
  const contexts = new Map<Kind, BrowserContext>();

  // Last month's events: Northwind's and Bluebird's new CPM campaigns (4.00), shown by the demo
  // partner and by a second partner, each with a share of 70% from the start of the month.
  beforeAll(async () => {
    const store = new Store(connect(`sqlite:${path.join(demo.dataDir, 'placard.db')}`));
    try {
      const { campaignIds } = await store.importCampaigns([
        { name: 'Northwind Outfitters', campaigns: [campaignInput({ title: 'Northwind last month' })] },
        { name: 'Bluebird Travel', campaigns: [campaignInput({ title: 'Bluebird last month' })] },
      ]);
      const [northwind, bluebird] = campaignIds as [number, number];
      for (const id of [northwind, bluebird])
        await setCampaignPrice(store, id, { model: 'cpm', amountMicros: 4_000_000, since: MONTH_START });
      const demoPartner = (await store.findPartner('Demo Publisher'))!;
      const demoKey = await store.createApiKey({
        partnerId: demoPartner.id,
        label: 'last month',
        displayPrefix: 'plc_last',
        digest: 'statements-demo',
      });
      const demoSource = { partnerId: demoPartner.id, apiKeyId: demoKey.id };
      const harbour = await newPartnerKey(store, 'Harbour News', 'statements-harbour');
      for (const partnerId of [demoPartner.id, harbour.partnerId])
        await store.transaction((tx) =>
          tx.addRevenueShare({ partnerId, effectiveFrom: MONTH_START, basisPoints: 7_000, actor: 'test' }),
        );
      const events = (
        source: { partnerId: number; apiKeyId: number },
        campaignId: number,
        count: number,
        fields = {},
      ) =>
        Array.from({ length: count }, () =>
          trackedEvent({ ...source, campaignId, occurredAt: AT, priced: true, ...fields }),
        );
      // 250 impressions at a CPM of 4.00 cost 1.00 and earn the partner 0.70; 500 cost 2.00, earn 1.40.
      await store.insertEvents([
        ...events(demoSource, northwind, 250),
        ...events(demoSource, northwind, 3, { verdict: 'invalid', reason: REASONS.knownBot }),
        ...events(harbour, bluebird, 500),
      ]);
    } finally {
      await store.close();
    }
  });

  /** A page signed in as the demo user of `kind` (one sign-in each, reused). */
  async function signIn(kind: Kind, viewport = DESKTOP): Promise<Page> {
    let context = contexts.get(kind);
    const fresh = context === undefined;
    context ??= await demo.newContext({ viewport, acceptDownloads: true });
    contexts.set(kind, context);
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    page.setDefaultTimeout(15_000);
    // A page this test expects refused (403, 404, 409, a refused form's 400) is logged as a failed
    // load; any other error (a script failing, a resource refused by the CSP) must not happen.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of (400|403|404|409) /.test(message.text()))
        consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(`${demo.server.url}/statements`);
    if (!fresh) return page;
    await fillSignIn(page, demo.demoUser(kind));
    await page.waitForURL((url) => url.pathname === '/statements');
    return page;
  }

  /** Screenshots of `page` at desktop and phone sizes, each checked by axe and for sideways scrolling. */
  const shoot = (page: Page, name: string) => shootBothSizes(page, demo.shots, name);

  /** The statement of `account` in the month, through the management API. */
  async function statementOf(account: string) {
    const list = await demo.admin<Array<{ id: number; accountName: string }>>(
      'GET',
      `/statements?month=${MONTH}`,
    );
    const found = list.find((statement) => statement.accountName === account);
    if (!found) throw new Error(`no statement of ${account} in ${MONTH}`);
    return found;
  }

  it('the operator issues last month after confirming it, and sees its statements by account', async () => {
    const page = await signIn('operator');
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Statements' })
      .click();
    await page.waitForURL(`${demo.server.url}/statements`);
    await expect(page.locator('main').innerText()).resolves.toContain('No statements yet.');
    expect(await shoot(page, 'statements-empty')).toEqual([]);

    await page.getByRole('link', { name: `Issue statements for ${MONTH_NAME}` }).click();
    await page.waitForURL(/\/statements\/issue\?month=/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Issue statements for ${MONTH_NAME}?`,
    );
    expect(await shoot(page, 'statements-issue-confirm')).toEqual([]);
    // Once pressed, the button says the month is being issued and cannot be pressed again. (The
    // test holds the form back to look, then sends it: a page whose next one is loading cannot be read.)
    const form = page.locator('form[data-busy]');
    await form.evaluate((element) => element.addEventListener('submit', (event) => event.preventDefault()));
    await page.getByRole('button', { name: `Issue statements for ${MONTH_NAME}` }).click();
    await expect(page.getByRole('button', { name: 'Issuing the statements…' }).isDisabled()).resolves.toBe(
      true,
    );
    await expect(page.getByRole('status').textContent()).resolves.toContain('keep this page open');
    await form.evaluate((element: HTMLFormElement) => element.submit());
    await page.waitForURL(`${demo.server.url}/statements?month=${MONTH}`);
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(
      new RegExp(`${MONTH_NAME} is issued: \\d+ statements`),
    );
    const advertisers = page.getByRole('region', { name: `Advertiser statements for ${MONTH_NAME}` });
    const partners = page.getByRole('region', { name: `Partner statements for ${MONTH_NAME}` });
    await expect(advertisers.getByRole('row', { name: /Bluebird Travel/ }).innerText()).resolves.toMatch(
      /2\.00/,
    );
    await expect(partners.getByRole('row', { name: /Harbour News/ }).innerText()).resolves.toMatch(
      /1\.40[\s\S]*Payable, not paid yet/,
    );
    // Amounts right-aligned in digits of one width, headers with them.
    const cell = partners.locator('td.money').first();
    await expect(cell.evaluate((td) => getComputedStyle(td).textAlign)).resolves.toBe('right');
    await expect(cell.evaluate((td) => getComputedStyle(td).fontVariantNumeric)).resolves.toBe(
      'tabular-nums',
    );
    expect(await shoot(page, 'statements-month')).toEqual([]);

    // A month already issued is refused, saying why, on the page.
    const again = await page.request.post(`${demo.server.url}/statements/issue`, {
      form: { _csrf: await csrfOf(page), month: MONTH },
      headers: { origin: demo.server.url },
    });
    expect(again.status()).toBe(409);
    expect(await again.text()).toContain(`${MONTH_NAME} was not issued`);
  });

  /** The CSRF token of the page's forms (the sign-out form has one on every page). */
  const csrfOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();

  it('the operator records an adjustment, refused first for an amount it cannot read', async () => {
    const page = await signIn('operator');
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Adjustments' })
      .click();
    await page.waitForURL(`${demo.server.url}/adjustments`);
    await expect(page.locator('main').innerText()).resolves.toContain('No adjustments yet.');
    await page.getByLabel('Account').selectOption({ label: 'Harbour News' });
    await page.getByLabel('Amount (USD)').fill('-1.2.5');
    await page.getByLabel('Reason').fill('Refund of bot traffic found late');
    await page.getByRole('button', { name: 'Record the adjustment' }).click();
    await expect(page.locator('#amount').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator('main').innerText()).resolves.toContain(
      'Amount (USD) must be an amount such as',
    );
    // Kept as typed.
    await expect(page.getByLabel('Reason').inputValue()).resolves.toBe('Refund of bot traffic found late');
    expect(await shoot(page, 'adjustments-refused')).toEqual([]);

    await page.getByLabel('Amount (USD)').fill('-0.25');
    await page.getByRole('button', { name: 'Record the adjustment' }).click();
    await page.waitForURL(`${demo.server.url}/adjustments`);
    const row = page.getByRole('row', { name: /Harbour News/ });
    await expect(row.innerText()).resolves.toMatch(/-0\.25[\s\S]*Refund of bot traffic found late/);
    await expect(row.innerText()).resolves.toContain('Not yet: on the next statement');
    const [adjustment] = await demo.admin<Array<{ amountMicros: number; reason: string }>>(
      'GET',
      '/adjustments',
    );
    expect(adjustment).toMatchObject({ amountMicros: -250_000, reason: 'Refund of bot traffic found late' });
    expect(await shoot(page, 'adjustments')).toEqual([]);
  });

  it('the operator reads a partner statement, prints it without the menu, marks it paid and downloads its CSV', async () => {
    const page = await signIn('operator');
    const demoPublisher = await statementOf('Demo Publisher');
    await page.goto(`${demo.server.url}/statements?month=${MONTH}`);
    await page.getByRole('link', { name: 'Demo Publisher' }).click();
    await page.waitForURL(`${demo.server.url}/statements/${demoPublisher.id}`);
    const main = page.locator('main');
    await expect(main.innerText()).resolves.toContain(`Partner statement: Demo Publisher, ${MONTH_NAME}`);
    const line = page.getByRole('row', { name: /header_banner · last month/ });
    // 250 impressions earned 0.70; the 3 from a known bot are counted, never earning.
    await expect(line.locator('td').allInnerTexts()).resolves.toEqual([
      'header_banner · last month',
      '250',
      '0',
      '3',
      '0',
      '0.70',
    ]);
    expect(await shoot(page, 'statement-partner')).toEqual([]);

    await page.emulateMedia({ media: 'print' });
    await expect(page.locator('header.top').isVisible()).resolves.toBe(false);
    await expect(page.getByRole('button', { name: 'Mark paid' }).isVisible()).resolves.toBe(false);
    await expect(page.getByRole('link', { name: 'Download CSV' }).isVisible()).resolves.toBe(false);
    await expect(page.getByRole('heading', { name: 'Totals' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(demo.shots, 'statement-partner-print.png'), fullPage: true });
    await page.emulateMedia({ media: 'screen' });
    await expect(page.locator('header.top').isVisible()).resolves.toBe(true);

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download CSV' }).click();
    const file = await (await download).path();
    const csv = fs.readFileSync(file, 'utf8');
    expect(csv.split('\n')[0]).toMatch(/^statement,month,line,/);
    expect(csv).toContain(`${demoPublisher.id},${MONTH},placement_key,`);

    await page.getByLabel('Payment reference').fill('TRF-2026-0001');
    await page.getByRole('button', { name: 'Mark paid' }).click();
    await page.waitForURL(`${demo.server.url}/statements/${demoPublisher.id}`);
    await expect(main.innerText()).resolves.toMatch(/Reference\s+TRF-2026-0001/);
    await expect(page.getByRole('button', { name: 'Mark paid' }).count()).resolves.toBe(0);
    expect(await shoot(page, 'statement-partner-paid')).toEqual([]);
  });

  it('no dashboard route changes an issued statement', async () => {
    const page = await signIn('operator');
    const harbour = await statementOf('Harbour News');
    const before = await demo.admin('GET', `/statements/${harbour.id}`);
    const post = (url: string, form: Record<string, string>) =>
      page.request.post(`${demo.server.url}${url}`, {
        form,
        headers: { origin: demo.server.url },
        maxRedirects: 0,
      });
    const csrf = await csrfOf(page);
    for (const url of [
      `/statements/${harbour.id}`,
      `/statements/${harbour.id}.csv`,
      `/statements/${harbour.id}/lines`,
    ])
      expect((await post(url, { _csrf: csrf, totalMicros: '0' })).status(), url).toBe(404);
    // Paid once, a second payment of a paid statement is refused.
    const demoPublisher = await statementOf('Demo Publisher');
    const second = await post(`/statements/${demoPublisher.id}/payment`, { _csrf: csrf, reference: 'AGAIN' });
    expect(second.status()).toBe(409);
    expect(await demo.admin('GET', `/statements/${harbour.id}`)).toEqual(before);
    const paid = await demo.admin<{ payment: { reference: string } }>(
      'GET',
      `/statements/${demoPublisher.id}`,
    );
    expect(paid.payment.reference).toBe('TRF-2026-0001');
  });

  it('an advertiser sees only its own statements', async () => {
    const page = await signIn('advertiser');
    await expect(
      page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Adjustments' }).count(),
    ).resolves.toBe(0);
    const rows = page.getByRole('region', { name: /Statements of Northwind Outfitters/ }).getByRole('row');
    await expect(rows.count()).resolves.toBe(2);
    await rows.nth(1).getByRole('link', { name: MONTH_NAME }).click();
    await page.waitForURL(/\/statements\/\d+$/);
    await expect(page.locator('main').innerText()).resolves.toContain(
      `Advertiser statement: Northwind Outfitters, ${MONTH_NAME}`,
    );
    await expect(page.getByRole('row', { name: /Northwind last month/ }).innerText()).resolves.toMatch(
      /1\.00/,
    );
    expect(await shoot(page, 'statement-advertiser')).toEqual([]);
    for (const other of ['Bluebird Travel', 'Demo Publisher']) {
      const { id } = await statementOf(other);
      expect((await page.goto(`${demo.server.url}/statements/${id}`))!.status()).toBe(404);
      expect((await page.request.get(`${demo.server.url}/statements/${id}.csv`)).status()).toBe(404);
    }
    expect((await page.goto(`${demo.server.url}/adjustments`))!.status()).toBe(403);
    await page.goto(`${demo.server.url}/statements`);
    expect(await shoot(page, 'statements-advertiser')).toEqual([]);
  });

  it('a partner sees only its own statements and payouts', async () => {
    const page = await signIn('partner');
    const rows = page.getByRole('region', { name: /Statements of Demo Publisher/ }).getByRole('row');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.nth(1).innerText()).resolves.toMatch(/Paid \d{4}-\d\d-\d\d/);
    expect(await shoot(page, 'statements-partner')).toEqual([]);
    await rows.nth(1).getByRole('link', { name: MONTH_NAME }).click();
    await page.waitForURL(/\/statements\/\d+$/);
    await expect(page.locator('main').innerText()).resolves.toMatch(/Reference\s+TRF-2026-0001/);
    for (const other of ['Harbour News', 'Northwind Outfitters']) {
      const { id } = await statementOf(other);
      expect((await page.goto(`${demo.server.url}/statements/${id}`))!.status()).toBe(404);
    }
    expect(consoleErrors).toEqual([]);
  });
});
