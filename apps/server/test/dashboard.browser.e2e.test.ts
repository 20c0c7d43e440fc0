import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fillLabelled, fillSignIn, seriousAxeFindings } from './helpers/browser-checks.js';
import { demoInBrowser } from './helpers/demo-in-browser.js';
import { eventually, PROPAGATION_MS } from './helpers/eventually.js';

type Kind = 'operator' | 'advertiser' | 'partner';
/** Every page of each kind of account's menu (each demo user is an admin of theirs). */
const PAGES: Record<Kind, string[]> = {
  operator: [
    '/review',
    '/campaigns',
    '/reports',
    '/partners',
    '/keys',
    '/flags',
    '/advertisers',
    '/placements',
    '/audit',
    '/health',
    '/users',
    // Money (D18): a priced demo campaign's page with its price history, and the demo partner's shares.
    '/campaigns/1',
    '/partners/1/revenue-shares',
    // What the demo partner blocks: the operator chooses among every advertiser.
    '/partners/1/blocks',
    // Statements (D18): the months to issue, and adjustments.
    '/statements',
    '/adjustments',
    // Webhooks (D19): the endpoints, and the deliveries of the one the visits' set-up adds.
    '/webhooks',
    '/webhooks/1',
  ],
  advertiser: ['/campaigns', '/campaigns/new', '/reports', '/statements', '/users', '/webhooks'],
  partner: [
    '/keys',
    '/flags',
    '/placements',
    '/integration',
    '/reports',
    '/users',
    '/partners/1/revenue-shares',
    '/partners/1/blocks',
    '/statements',
    '/webhooks',
  ],
};

/**
 * The dashboard in Debian's Chromium against the built server started as a process with the demo
 * data, signed in as the demo's user of each kind of account (D14).
 */
/** A person's browser, as a partner forwards it with an event (not a bot's). */
const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

describe('the dashboard in a real browser', () => {
  const demo = demoInBrowser('dashboard');
  /** Requests any page made to another origin: there must be none (D14). */
  const foreign: string[] = [];
  /** Errors any page logged (a script failing, a resource refused by the CSP): there must be none. */
  const consoleErrors: string[] = [];

  /** Each kind's signed-in browser (its cookies), reused: sign-in attempts per address are limited. */
  const signedIn = new Map<Kind, BrowserContext>();

  /**
   * A new page signed in as the demo user of `kind`, at the dashboard's home for that kind. A page
   * with JavaScript off gets a browser of its own, and so signs in again.
   */
  async function signIn(
    kind: Kind,
    viewport = { width: 1280, height: 900 },
    javaScriptEnabled = true,
  ): Promise<Page> {
    const user = demo.demoUser(kind);
    const reused = javaScriptEnabled ? signedIn.get(kind) : undefined;
    const context = reused ?? (await demo.newContext({ viewport, javaScriptEnabled }));
    if (!reused) {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: demo.server.url });
    }
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    // A wait for what a page shows, not a promise of speed: a loaded machine takes many seconds.
    page.setDefaultTimeout(PROPAGATION_MS);
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== demo.server.url) foreign.push(request.url());
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(`${demo.server.url}/`);
    if (reused) return page;
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await fillSignIn(page, user);
    await page.waitForURL((url) => url.pathname !== '/sign-in');
    if (javaScriptEnabled) signedIn.set(kind, context);
    return page;
  }

  async function fetchIds(key: string): Promise<number[]> {
    const answer = await fetch(
      `${demo.server.url}/api/v1/campaigns/fetch?placement=header_banner&location=US&device=mobile&limit=100`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    if (answer.status !== 200) return [];
    return ((await answer.json()) as { data: Array<{ id: number }> }).data.map((campaign) => campaign.id);
  }

  /** The advertiser or partner of that name, through the management API. */
  async function named(list: '/advertisers' | '/partners', name: string) {
    const found = (await demo.admin<Array<{ id: number; name: string }>>('GET', list)).find(
      (item) => item.name === name,
    );
    if (!found) throw new Error(`no ${list.slice(1, -1)} named ${name}`);
    return found;
  }

  /** A new campaign of the demo advertiser Northwind, submitted for review. */
  async function submitted(title: string, priority = 0) {
    const northwind = await named('/advertisers', 'Northwind Outfitters');
    const destinationUrl = 'https://northwind.example/offer';
    const created = await demo.admin('POST', '/campaigns', {
      advertiserId: northwind.id,
      title,
      destinationUrl,
      placements: ['header_banner'],
      priority,
    });
    await demo.admin('POST', `/campaigns/${created.id}/submit`);
    return created;
  }

  let partnerKey = '';
  let submittedId = 0;

  it('1. a partner creates a key, sees it once, copies it; then it is nowhere', async () => {
    const page = await signIn('partner');
    expect(new URL(page.url()).pathname).toBe('/keys');
    await page.getByLabel('Label').fill('browser test');
    await page.getByRole('button', { name: 'Create a key' }).click();
    const field = page.getByLabel('API key');
    partnerKey = await field.inputValue();
    expect(partnerKey).toMatch(/^plc_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(partnerKey);
    await page.screenshot({ path: path.join(demo.shots, 'new-key.png') });

    // From here on, no answer the browser receives may carry the plaintext.
    const bodies: string[] = [];
    page.on(
      'response',
      (response) =>
        void response.text().then(
          (text) => bodies.push(text),
          () => {},
        ),
    );
    await page.getByRole('link', { name: 'I have stored it' }).click();
    await page.waitForURL(`${demo.server.url}/keys`);
    for (const next of ['/keys', '/users', '/']) await page.goto(`${demo.server.url}${next}`);
    await page.goBack();
    expect(await page.content()).not.toContain(partnerKey);
    expect(bodies.length).toBeGreaterThan(2);
    for (const body of bodies) expect(body).not.toContain(partnerKey);
    const storage = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
    expect(storage).not.toContain(partnerKey);
    for (const cookie of await page.context().cookies()) expect(cookie.value).not.toContain(partnerKey);
    expect(demo.server.output.join('\n')).not.toContain(partnerKey);
    await eventually(async () => (await fetchIds(partnerKey)).length > 0, 'the new key fetching');
  });

  it('2. an advertiser creates a campaign with targeting, a flight and a daily cap in its time zone, previews and submits it', async () => {
    const page = await signIn('advertiser');
    await page.getByRole('link', { name: 'New campaign' }).click();
    await fillLabelled(page, {
      Title: 'Browser-approved offer',
      Description: 'Made in a real browser.',
      'Destination URL': 'https://northwind.example/approved',
      Countries: 'us, CA',
      'Time zone': 'Europe/Paris',
      Starts: '2026-01-01T09:00',
      Ends: '2099-12-31T18:30',
      'Daily impression cap': '1000',
    });
    await page.getByRole('checkbox', { name: /header_banner/ }).check();
    await page.getByRole('checkbox', { name: /sidebar_top/ }).check();
    await page.getByRole('checkbox', { name: 'mobile', exact: true }).check();
    await page.getByRole('button', { name: 'Save draft and preview' }).click();
    await page.waitForURL(/\/campaigns\/\d+$/);
    const preview = await page.locator('main').innerText();
    for (const shown of [
      'How a partner shows it',
      'Made in a real browser.',
      'CA, US',
      'Europe/Paris',
      '1000 impressions',
      '2026-01-01 09:00 Europe/Paris to 2099-12-31 18:30 Europe/Paris',
    ])
      expect(preview).toContain(shown);
    await page.screenshot({ path: path.join(demo.shots, 'campaign-preview.png'), fullPage: true });
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.waitForURL(`${demo.server.url}/campaigns`);
    const row = page.getByRole('row').filter({ hasText: 'Browser-approved offer' });
    await expect(row.textContent()).resolves.toContain('pending review');
    submittedId = Number(
      /\/campaigns\/(\d+)/.exec(
        (await row.getByRole('link', { name: 'Browser-approved offer', exact: true }).getAttribute('href')) ??
          '',
      )?.[1],
    );
  });

  it('3. an operator approves a campaign from the review queue and the partner fetches it without a restart', async () => {
    const created = { id: submittedId };
    const page = await signIn('operator');
    expect(new URL(page.url()).pathname).toBe('/review');
    await page.getByRole('button', { name: 'Approve: Browser-approved offer' }).click();
    await page
      .getByRole('listitem')
      .filter({ hasText: 'Browser-approved offer' })
      .waitFor({ state: 'detached' });
    await eventually(
      async () => (await fetchIds(partnerKey)).includes(created.id),
      'the approved campaign served',
    );
    // It is gone from the queue; the page says what was done with it.
    await expect(
      page.getByRole('listitem').filter({ hasText: 'Browser-approved offer' }).count(),
    ).resolves.toBe(0);
    await expect(page.getByRole('status').innerText()).resolves.toContain(
      'Campaign “Browser-approved offer” approved',
    );
  });

  it('4. impressions and clicks show in the advertiser’s chart and table and the partner’s report, without a reload', async () => {
    const advertiser = await signIn('advertiser');
    await advertiser.goto(`${demo.server.url}/reports?window=hour&campaign=${submittedId}`);
    const partner = await signIn('partner');
    // Narrowed to this campaign, as the advertiser's is: the demo's traffic of the last hour leaves
    // the hour's window minute by minute, so the partner's whole report can shrink while it is read.
    await partner.goto(`${demo.server.url}/reports?window=hour&campaign=${submittedId}`);
    /** What a page shows: its totals, the table's newest minute, and what the chart drew. */
    const shown = (page: Page) =>
      page.evaluate(() => {
        const text = (selector: string) =>
          Number(document.querySelector(selector)?.textContent?.replaceAll(',', '') ?? NaN);
        const newest = document.querySelector('#series tbody tr');
        return {
          impressions: text('[data-total="impressions"]'),
          clicks: text('[data-total="clicks"]'),
          tableImpressions: Number(newest?.querySelectorAll('td')[0]?.getAttribute('data-value')),
          chart: document.querySelector('[data-chart]')?.getAttribute('data-drawn') ?? '',
          // Set below: a reload would lose it.
          sameDocument: (window as unknown as { placardMark?: number }).placardMark === 1,
        };
      });
    for (const page of [advertiser, partner])
      await page.evaluate(() => {
        (window as unknown as { placardMark?: number }).placardMark = 1;
      });
    const partnerBefore = await shown(partner);
    const event = { campaignId: submittedId, placement: 'header_banner', location: 'US', device: 'mobile' };
    // Each display is a different person's, forwarded as the contract's optional end-user fields, so
    // two clicks at once are two people's and not one person's double click (D15).
    const track = (kind: 'impression' | 'click', person: number) =>
      fetch(`${demo.server.url}/api/v1/campaigns/${kind}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${partnerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...event, userIp: `198.18.${person}.7`, userAgent: BROWSER_USER_AGENT }),
      });
    // Displays first, then clicks on two of them: a click with no impression before it is not
    // billed (D15).
    const answers = await Promise.all(Array.from({ length: 7 }, (_, person) => track('impression', person)));
    answers.push(...(await Promise.all(Array.from({ length: 2 }, (_, person) => track('click', person)))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(9).fill(200));

    const advertiserSees = async () => {
      const now = await shown(advertiser);
      return (
        now.impressions === 7 &&
        now.clicks === 2 &&
        now.tableImpressions === 7 &&
        now.chart === '7 impressions, 2 clicks' &&
        now.sameDocument
      );
    };
    const partnerSees = async () => {
      const now = await shown(partner);
      return (
        now.impressions === partnerBefore.impressions + 7 &&
        now.clicks === partnerBefore.clicks + 2 &&
        now.sameDocument
      );
    };
    await eventually(advertiserSees, 'the events in the advertiser’s report');
    await eventually(partnerSees, 'the events in the partner’s report');
    await advertiser.screenshot({
      path: path.join(demo.shots, 'advertiser-live-report.png'),
      fullPage: true,
    });
  });

  it('5. a rejected campaign shows its reason to the advertiser; a suspended key its reason to the partner', async () => {
    await submitted('Too good to be true');
    const operator = await signIn('operator');
    const card = operator.getByRole('listitem').filter({ hasText: 'Too good to be true' });
    await card.getByLabel('Reason').fill('claims cannot be verified');
    await card.getByRole('button', { name: 'Reject: Too good to be true' }).click();
    await card.waitFor({ state: 'detached' });

    const advertiser = await signIn('advertiser');
    const row = advertiser.getByRole('row').filter({ hasText: 'Too good to be true' });
    await expect(row.textContent()).resolves.toContain('Rejected: claims cannot be verified');

    // The operator suspends the partner's key from the keys page, with the reason the partner reads.
    await operator.getByRole('link', { name: 'API keys' }).click();
    const suspending = operator.getByRole('row').filter({ hasText: 'browser test' });
    await suspending
      .getByRole('textbox', { name: /^Reason to suspend key/ })
      .fill('traffic under investigation');
    await suspending.getByRole('button', { name: /^Suspend key/ }).click();
    await suspending.getByText('Suspended: traffic under investigation').waitFor();
    await expect(suspending.getByRole('button', { name: /^Reinstate key/ }).count()).resolves.toBe(1);
    // …and the key stops fetching, without a restart.
    await eventually(async () => (await fetchIds(partnerKey)).length === 0, 'the suspended key refused');
    const partner = await signIn('partner');
    const keyRow = partner.getByRole('row').filter({ hasText: 'browser test' });
    await expect(keyRow.textContent()).resolves.toContain('Suspended: traffic under investigation');
    // While a key is suspended, new keys are the operator's: the page says why instead of the form.
    await expect(partner.locator('main').textContent()).resolves.toContain(
      'only the operator may create keys for this partner',
    );
    await expect(partner.getByRole('button', { name: 'Create a key' }).count()).resolves.toBe(0);
    // Reinstated, the key serves again and the partner may create keys (test 7 does).
    await suspending.getByRole('button', { name: /^Reinstate key/ }).click();
    await suspending.getByRole('button', { name: /^Suspend key/ }).waitFor();
    await partner.reload();
    await expect(partner.getByRole('button', { name: 'Create a key' }).count()).resolves.toBe(1);
  });

  it('5b. a partner’s integration page gives ready curl commands for its placements', async () => {
    const partner = await signIn('partner');
    await partner.getByRole('link', { name: 'Integration' }).click();
    await partner.waitForURL(`${demo.server.url}/integration`);
    const command = partner.getByRole('region', { name: 'Fetch command' });
    await expect(command.textContent()).resolves.toMatch(
      /^curl -s "http:\/\/[^"]+\/api\/v1\/campaigns\/fetch\?placement=header_banner&limit=3"/,
    );
    await partner.getByLabel('Placement').selectOption('sidebar_top');
    await partner.getByRole('button', { name: 'Show its commands' }).click();
    await partner.waitForURL(/placement=sidebar_top/);
    const text = (await command.textContent()) ?? '';
    expect(text).toContain('placement=sidebar_top&limit=3');
    expect(text).toContain('Authorization: Bearer $PLACARD_API_KEY');
    // The command works as written, with a live key of the partner in PLACARD_API_KEY.
    const route = /\/api\/v1\/campaigns\/fetch\?[^"]+/.exec(text)![0];
    const answer = await fetch(`${demo.server.url}${route}`, {
      headers: { authorization: `Bearer ${demo.server.summary.demoApiKey}` },
    });
    expect(answer.status).toBe(200);
  });

  it('7. works with JavaScript off: sign in, create a key, read a report (current at each load)', async () => {
    const partner = await signIn('partner', { width: 1280, height: 900 }, false);
    await partner.getByRole('link', { name: 'API keys' }).click();
    await partner.getByLabel('Label').fill('no scripts');
    await partner.getByRole('button', { name: 'Create a key' }).click();
    await expect(partner.getByLabel('API key', { exact: true }).inputValue()).resolves.toMatch(/^plc_/);
    await partner.goto(`${demo.server.url}/reports?window=hour`);
    await expect(partner.locator('#series tbody tr').count()).resolves.toBe(60);
    await expect(partner.locator('[data-total="impressions"]').textContent()).resolves.toMatch(/^\d/);
    // Without scripts nothing draws the chart; the table carries the figures.
    await expect(partner.locator('[data-chart]').getAttribute('data-drawn')).resolves.toBeNull();
  });

  it('6. every page passes axe-core as each role, fits a 390-pixel screen, and calls no other origin', async () => {
    const signedOut = await (await demo.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    // An endpoint of the operator's (`/webhooks/1`), with a test message whose attempts its page shows;
    // under `.invalid`, a name that never resolves (RFC 2606), so no delivery leaves this machine.
    const endpoint = await demo.admin<{ id: number }>('POST', '/webhooks', {
      url: 'https://hooks.placard.invalid/placard',
      eventTypes: ['*'],
      description: 'Operations channel',
    });
    await demo.admin('POST', `/webhooks/${endpoint.id}/test`);
    await signedOut.goto(`${demo.server.url}/sign-in`);
    const visits: Array<[string, Page, string]> = [['signed-out', signedOut, '/sign-in']];
    for (const kind of ['operator', 'advertiser', 'partner'] as const) {
      const page = await signIn(kind, { width: 390, height: 844 });
      for (const pathname of PAGES[kind]) visits.push([kind, page, pathname]);
      if (kind === 'advertiser')
        for (const own of [`/campaigns/${submittedId}`, `/campaigns/${submittedId}/edit`])
          visits.push([kind, page, own]);
    }
    const problems: string[] = [];
    for (const [who, page, pathname] of visits) {
      if (new URL(page.url()).pathname !== pathname) await page.goto(`${demo.server.url}${pathname}`);
      expect(new URL(page.url()).pathname, `${who} ${pathname}`).toBe(pathname);
      const violations = await seriousAxeFindings(page);
      for (const id of violations) problems.push(`${who} ${pathname}: ${id}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) problems.push(`${who} ${pathname}: ${overflow}px of horizontal scrolling`);
      // The whole menu wraps onto the screen: no entry is cut off or pushed beyond its right edge.
      const offMenu = await page.evaluate(() =>
        [...document.querySelectorAll('nav[aria-label="Sections"] a')]
          .filter((link) => link.getBoundingClientRect().right > window.innerWidth)
          .map((link) => link.textContent),
      );
      if (offMenu.length > 0)
        problems.push(`${who} ${pathname}: menu entries off screen: ${offMenu.join(', ')}`);
      await page.screenshot({
        path: path.join(demo.shots, `${who}${pathname.replaceAll('/', '-')}.png`),
        fullPage: true,
      });
    }
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('8. an operator adds a webhook endpoint and reads its whole secret once on a phone; its row lines up', async () => {
    const page = await signIn('operator', { width: 390, height: 844 });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${demo.server.url}/webhooks`);
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.placard.invalid/phone');
    await page.getByLabel('Events', { exact: true }).fill('*');
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    // POST, redirect, GET: the secret's own page, which a reload cannot post again.
    await page.waitForURL(/\/webhooks\/\d+\/secret$/);
    const field = page.getByLabel('Signing secret');
    const secret = await field.inputValue();
    expect(secret).toMatch(/^whsec_/);
    // Every character in view on a phone: nothing scrolled out of the box either way.
    const hidden = await field.evaluate(
      (box) => box.scrollWidth - box.clientWidth + (box.scrollHeight - box.clientHeight),
    );
    expect(hidden).toBe(0);
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.screenshot({ path: path.join(demo.shots, 'operator-webhooks-secret.png'), fullPage: true });
    await page.reload();
    await expect(page.content()).resolves.not.toContain(secret);
    await expect(page.content()).resolves.toContain('was shown once and is not shown again');
    expect(await seriousAxeFindings(page)).toEqual([]);

    // On a wide screen each row's cells end together: the buttons do not make theirs a box of its own.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${demo.server.url}/webhooks`);
    const ragged = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLTableRowElement>('table tbody tr')]
        .filter(
          (row) =>
            new Set([...row.cells].map((cell) => Math.round(cell.getBoundingClientRect().bottom))).size > 1,
        )
        .map((row) => row.cells[0]?.textContent),
    );
    expect(ragged).toEqual([]);
    await page.screenshot({ path: path.join(demo.shots, 'operator-webhooks-wide.png'), fullPage: true });
  });
});
