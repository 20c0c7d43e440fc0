import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../scripts/chromium.mjs';
import { tempDir } from './helpers/engines.js';
import { startPlacard, type RunningPlacard } from './helpers/running-placard.js';

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
});
