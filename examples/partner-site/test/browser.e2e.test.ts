import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../scripts/chromium.mjs';
import { ROOT } from '../../../apps/server/test/helpers/process.js';
import { startPlacard, type RunningPlacard } from '../../../apps/server/test/helpers/running-placard.js';

/** The advertiser's landing page, where a click must end up. */
async function landingServer() {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Landing</title><h1 id="landing">Welcome from the ad</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** The example site as a user runs it: its built entry point with the key in its environment. */
async function startSite(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'examples/partner-site/dist/main.js')], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the partner site exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { url, child };
}

describe('the example partner site in a real browser', () => {
  let placard: RunningPlacard;
  let landing: Awaited<ReturnType<typeof landingServer>>;
  let site: Awaited<ReturnType<typeof startSite>>;
  let browser: Browser;
  let apiKey: string;

  beforeAll(async () => {
    landing = await landingServer();
    placard = await startPlacard([
      {
        title: 'Browser campaign',
        description: 'Click me for real',
        destinationUrl: `${landing.url}/offer?from=placard`,
        status: 'running',
        placements: ['header_banner'],
      },
      {
        title: 'Once a day',
        destinationUrl: `${landing.url}/offer?from=placard`,
        status: 'running',
        placements: ['sidebar_top'],
        frequencyCaps: [{ impressions: 1, per: 'day' }],
      },
    ]);
    apiKey = (await placard.newKey('Example Site')).key;
    site = await startSite({ PLACARD_URL: placard.url, PLACARD_API_KEY: apiKey });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    site?.child.kill('SIGTERM');
    await placard?.stop();
    landing?.close();
  });

  it('renders a campaign, records one impression when seen and one click, lands on the destination, and never shows the key', async () => {
    const page = await browser.newPage();
    const received: string[] = [];
    page.on('response', async (response) => {
      const body = await response.text().catch(() => '');
      received.push(`${response.url()}\n${JSON.stringify(response.headers())}\n${body}`);
    });

    await page.goto(site.url);
    const ad = page.locator('#header_banner a.ad');
    await expect.poll(() => ad.count()).toBe(1);
    expect(await ad.locator('.ad-title').textContent()).toBe('Browser campaign');

    const [campaignId] = placard.campaignIds as [number];
    // The impression is reported once the ad is visible (the page's IntersectionObserver).
    await expect
      .poll(async () => (await placard.counts(campaignId)).impressions, { timeout: 10_000 })
      .toBe(1);

    await Promise.all([page.waitForURL(`${landing.url}/offer?from=placard`), ad.click()]);
    expect(await page.locator('#landing').textContent()).toBe('Welcome from the ad');
    await expect.poll(async () => (await placard.counts(campaignId)).clicks, { timeout: 10_000 }).toBe(1);
    expect(await placard.counts(campaignId)).toEqual({
      impressions: 1,
      clicks: 1,
      nonBillableImpressions: 0,
      nonBillableClicks: 0,
    });

    expect(received.length).toBeGreaterThanOrEqual(4);
    for (const response of received) expect(response).not.toContain(apiKey);
    const cookies = JSON.stringify(await page.context().cookies());
    expect(cookies).not.toContain(apiKey);
    await page.close();
  });

  it('names its reader as the viewer, so a campaign capped at once a day is not shown to them again (D20)', async () => {
    const capped = placard.campaignIds[1];
    const before = (await placard.counts(capped)).impressions;
    const page = await browser.newPage();
    await page.goto(site.url);
    const onceADay = page.locator('#sidebar_top a.ad', { hasText: 'Once a day' });
    await expect.poll(() => onceADay.count()).toBe(1);
    await expect
      .poll(async () => (await placard.counts(capped)).impressions, { timeout: 10_000 })
      .toBe(before + 1);
    const cookies = await page.context().cookies();
    expect(cookies.map((cookie) => cookie.name)).toContain('reader');
    await page.reload();
    await expect.poll(() => page.locator('#header_banner a.ad').count()).toBe(1);
    expect(await onceADay.count()).toBe(0);
    // Another reader (another browser's cookie) is still shown it.
    const other = await browser.newPage();
    await other.goto(site.url);
    await expect.poll(() => other.locator('#sidebar_top a.ad', { hasText: 'Once a day' }).count()).toBe(1);
    await Promise.all([page.close(), other.close()]);
  });
});
