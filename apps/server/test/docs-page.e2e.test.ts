import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../scripts/chromium.mjs';
import { tempDir } from './helpers/engines.js';
import { startPlacard, type RunningPlacard } from './helpers/running-placard.js';
import { axeFindings } from './helpers/browser-checks.js';

/** Expands one operation of the page and returns its block. */
async function expand(page: Page, tag: string, operationId: string) {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('.opblock-body').waitFor();
  return block;
}

describe('the API reference page at /docs in a real browser', () => {
  let placard: RunningPlacard;
  let browser: Browser;

  beforeAll(async () => {
    placard = await startPlacard([]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await placard?.stop();
  });

  it('offers no "Try it out" on the partner routes, says why and how to call them, and keeps it for the management API', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const partnerCalls: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/')) partnerCalls.push(request.url());
    });
    await page.goto(`${placard.url}/docs/`);
    await page.locator('.opblock').first().waitFor();

    for (const operationId of ['fetchCampaigns', 'trackImpression', 'trackClick']) {
      const block = await expand(page, 'Partner_API', operationId);
      const text = await block.innerText();
      expect(text, operationId).toContain('Server to server only.');
      expect(text, operationId).toContain('curl ');
      expect(await block.locator('.try-out__btn').count(), operationId).toBe(0);
      expect(await block.locator('.execute').count(), operationId).toBe(0);
    }
    // For a person to look at: the fetch operation as a reader of the page sees it.
    await page.locator('#operations-Partner_API-fetchCampaigns').evaluate((el) => el.scrollIntoView());
    await page.screenshot({ path: path.join(tempDir('placard-docs-'), 'docs.png') });

    const management = await expand(page, 'Partners', 'listPartners');
    await expect(management.locator('.try-out__btn').count()).resolves.toBe(1);
    expect(partnerCalls).toEqual([]);
  });

  it("is Placard's page, with no vendor's name or logo, and passes axe-core on a desktop and a phone", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${placard.url}/docs/`);
    await page.locator('.opblock').first().waitFor();
    await expect(page.title()).resolves.toBe('Placard API reference');
    await expect(
      page.getByRole('banner').getByRole('link', { name: 'Placard' }).getAttribute('href'),
    ).resolves.toBe('/');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/^Placard/);
    const html = (await page.content()).toLowerCase();
    for (const vendor of ['swagger', 'fastify', 'smartbear'])
      expect(await page.locator('body').innerText(), vendor).not.toMatch(new RegExp(vendor, 'i'));
    expect(html).not.toContain('<img');
    expect(await page.locator('.topbar').count()).toBe(0);
    expect((await axeFindings(page)).map((finding) => `${finding.id}: ${finding.target}`)).toEqual([]);
    // An operation open, its parameters and responses shown.
    await expand(page, 'Partners', 'listPartners');
    expect((await axeFindings(page)).map((finding) => `${finding.id}: ${finding.target}`)).toEqual([]);
    await page.screenshot({ path: path.join(tempDir('placard-docs-'), 'docs-desktop.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    expect((await axeFindings(page)).map((finding) => `${finding.id}: ${finding.target}`)).toEqual([]);
    await page.screenshot({ path: path.join(tempDir('placard-docs-'), 'docs-phone.png') });
  });

  it('tries a management operation with the admin token the reader types', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    await page.goto(`${placard.url}/docs/`);
    await page.locator('.opblock').first().waitFor();
    await page
      .getByRole('button', { name: /^Authorize/ })
      .first()
      .click();
    const token = page.locator('.auth-container').filter({ hasText: 'adminToken' });
    await token.locator('input').fill(placard.adminToken);
    expect((await axeFindings(page)).map((finding) => `${finding.id}: ${finding.target}`)).toEqual([]);
    await token.getByRole('button', { name: /^Authorize/ }).click();
    await token.getByRole('button', { name: 'Close', exact: true }).click();

    const block = await expand(page, 'Partners', 'listPartners');
    await block.getByRole('button', { name: 'Try it out' }).click();
    const answer = page.waitForResponse(
      (response) => new URL(response.url()).pathname === '/admin/v1/partners',
    );
    await block.getByRole('button', { name: 'Execute' }).click();
    expect((await answer).status()).toBe(200);
    await expect(
      block.locator('.live-responses-table tr.response .response-col_status').first().textContent(),
    ).resolves.toBe('200');
    // Swagger UI's buttons fade between colours when the answer redraws them: judge the colours
    // they settle on, not one caught halfway (axe once read the Execute button mid-fade).
    await page.waitForFunction(() =>
      document.getAnimations().every((animation) => animation.playState !== 'running'),
    );
    expect((await axeFindings(page)).map((finding) => `${finding.id}: ${finding.target}`)).toEqual([]);
  });
});
