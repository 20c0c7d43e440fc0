import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlacardError, type Device, type PlacardClient } from '@placard/client';
import { Displays } from './displays.js';
import { articlePage, type RenderedAd } from './page.js';

const PUBLIC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'public');
const STATIC: Record<string, { file: string; type: string }> = {
  '/ads.js': { file: 'ads.js', type: 'text/javascript; charset=utf-8' },
  '/site.css': { file: 'site.css', type: 'text/css; charset=utf-8' },
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface SiteOptions {
  client: PlacardClient;
  log?: (message: string, error?: unknown) => void;
}

/** A rough device type from the user agent; good enough for targeting an example. */
function deviceOf(userAgent: string | undefined): Device {
  if (userAgent === undefined) return 'desktop';
  if (/iPad|Tablet/i.test(userAgent)) return 'tablet';
  return /Mobi|Android/i.test(userAgent) ? 'mobile' : 'desktop';
}

/** The site's own first-party cookie naming a reader: a random id, nothing about the person. */
const READER_COOKIE = 'reader';
const READER_ID = /^[0-9a-f-]{36}$/;

/**
 * The reader's id from the site's own cookie, or a new one (and the header that sets it). It is the
 * site's pseudonymous id for the user, which it passes to Placard as `viewer` so that campaigns'
 * frequency caps count this reader (D20); Placard keeps only a keyed hash of it.
 */
function readerOf(request: http.IncomingMessage): { id: string; setCookie?: string } {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === READER_COOKIE && value !== undefined && READER_ID.test(value)) return { id: value };
  }
  const id = randomUUID();
  return { id, setCookie: `${READER_COOKIE}=${id}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax` };
}

/**
 * The example partner site: renders an article with campaigns fetched through the SDK for two
 * placements, reports an impression when the browser says an ad became visible, and sends clicks
 * through a redirect route that reports the click, then sends the user to the campaign.
 */
export function createSite({ client, log = console.error }: SiteOptions): http.Server {
  const displays = new Displays();

  /** The ads for one slot; a failed fetch renders an empty slot, never failed data. */
  async function adsFor(
    placement: string,
    limit: number,
    device: Device,
    viewer: string,
  ): Promise<RenderedAd[]> {
    try {
      const campaigns = await client.fetchCampaigns({ placement, limit, device, viewer });
      return campaigns.map((campaign) => {
        const display = client.display(campaign, placement, { device, viewer });
        return { display, token: displays.add(display) };
      });
    } catch (error) {
      log(`fetching campaigns for ${placement} failed; the slot stays empty`, error);
      return [];
    }
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://site.invalid');
    const send = (
      status: number,
      type: string,
      body: string | Buffer,
      headers: Record<string, string> = {},
    ) => {
      response.writeHead(status, { 'content-type': type, ...SECURITY_HEADERS, ...headers });
      response.end(body);
    };

    if (request.method === 'GET' && url.pathname === '/') {
      const device = deviceOf(request.headers['user-agent']);
      const reader = readerOf(request);
      const [header, sidebar] = await Promise.all([
        adsFor('header_banner', 1, device, reader.id),
        adsFor('sidebar_top', 2, device, reader.id),
      ]);
      return send(200, 'text/html; charset=utf-8', articlePage({ header, sidebar }), {
        'cache-control': 'no-store',
        ...(reader.setCookie !== undefined && { 'set-cookie': reader.setCookie }),
      });
    }

    const asset = STATIC[url.pathname];
    if (request.method === 'GET' && asset) {
      return send(200, asset.type, fs.readFileSync(path.join(PUBLIC, asset.file)));
    }

    const impression = /^\/ads\/impression\/([\w-]+)$/.exec(url.pathname);
    if (request.method === 'POST' && impression) {
      const display = displays.get(impression[1]!);
      if (!display) return send(404, 'text/plain', 'unknown ad');
      // Called again (a re-render, a second observer), the handle sends nothing more.
      await display.impression().catch((error: unknown) => log('reporting an impression failed', error));
      return send(204, 'text/plain', '');
    }

    const click = /^\/ads\/click\/([\w-]+)$/.exec(url.pathname);
    if (request.method === 'GET' && click) {
      const display = displays.get(click[1]!);
      if (!display) return send(404, 'text/plain', 'this ad has expired');
      try {
        // A click proves the ad was seen: if its visibility report has not arrived yet, send it first.
        if (!display.impressionStarted) await display.impression();
        await display.click();
      } catch (error) {
        // The user still gets where they wanted to go; the failure is ours to log.
        log('reporting a click failed', error instanceof PlacardError ? error.message : error);
      }
      return send(302, 'text/plain', '', { location: display.campaign.destinationUrl });
    }

    return send(404, 'text/plain', 'not found');
  }

  return http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log('request failed', error);
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('something went wrong');
    });
  });
}
