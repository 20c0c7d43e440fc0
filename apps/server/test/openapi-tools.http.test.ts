import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { paths } from './generated/placard-api.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ROOT } from './helpers/process.js';

const PRISM = path.join(ROOT, 'node_modules/.bin/prism');
const TYPES = path.join(ROOT, 'apps/server/test/generated/placard-api.ts');

interface Prism {
  url: string;
  output: string[];
  stop(): Promise<void>;
}

/**
 * Starts Stoplight Prism as a validating proxy on loopback in front of `upstream`: with `--errors`,
 * any request or response that breaks the document is answered with Prism's own error instead.
 */
async function startPrism(document: string, upstream: string, options: string[] = []): Promise<Prism> {
  const child = spawn(
    PRISM,
    ['proxy', document, upstream, '--errors', '--host', '127.0.0.1', '--port', '0', ...options],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } },
  );
  const output: string[] = [];
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(child.pid!, 'SIGTERM');
    });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`prism did not start in 30 s:\n${output.join('\n')}`)),
      30_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${code}:\n${output.join('\n')}`));
    });
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const listening = /listening on (http:\/\/[\d.]+:\d+)/.exec(line);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]);
        }
      });
    }
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, output, stop };
}

/**
 * What partners do with the document: generate types with openapi-typescript, call the API with an
 * openapi-fetch client, through Prism validating every exchange against the document. Every answer
 * must be the server's own: Prism's error in its place means the document and the server disagree.
 */
describe('the API document with third-party tools', () => {
  let t: TestApp;
  let prism: Prism;
  let directory: string;
  let campaignId: number;
  let client: ReturnType<typeof createClient<paths>>;

  beforeAll(async () => {
    t = await createTestApp();
    [campaignId] = (await t.addCampaigns([
      campaign({ title: 'Proxied', destinationUrl: 'https://advertiser.example/' }),
    ])) as [number];
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-prism-'));
    const document = path.join(directory, 'openapi.json');
    fs.writeFileSync(document, (await t.request({ method: 'GET', url: '/openapi.json' })).body);
    prism = await startPrism(document, t.url);
    client = createClient<paths>({ baseUrl: prism.url });
  });

  afterAll(async () => {
    await prism?.stop();
    await t?.close();
    if (directory) fs.rmSync(directory, { recursive: true, force: true });
  });

  /** Prism's own answers are problem documents; the server's never are. */
  const real = (result: { response: Response; error?: unknown }, status: number) => {
    const seen = `${result.response.status} ${JSON.stringify(result.error ?? '')}`;
    expect(result.response.headers.get('content-type') ?? '', seen).not.toMatch(/problem\+json/);
    expect(result.response.status, seen).toBe(status);
  };
  const partner = () => ({ Authorization: `Bearer ${t.apiKey}` });
  const admin = () => ({ Authorization: `Bearer ${t.adminToken}` });
  /** The options of a management call on one object, with no body. */
  const on = (id: number) => ({ params: { path: { id } }, headers: admin() });

  // Set-up generates the types from docs/openapi.json (openapi.http.test.ts holds that to the served one).
  it('served as /openapi.json, gives the types the tests compiled against (run `node scripts/setup.mjs` when this fails)', async () => {
    const generated = astToString(await openapiTS(new URL('/openapi.json', t.url)));
    expect(fs.readFileSync(TYPES, 'utf8').endsWith(generated)).toBe(true);
  });

  it('fetches: success, 400 and 401 are the server’s answers', async () => {
    const ok = await client.GET('/api/v1/campaigns/fetch', {
      params: { query: { placement: 'header_banner', device: 'mobile', location: 'us' } },
      headers: partner(),
    });
    real(ok, 200);
    expect(ok.data?.data.map((campaign) => campaign.id)).toEqual([campaignId]);

    // `tokens` is a boolean to the generated types; the client writes it `tokens=true`.
    const tokened = await client.GET('/api/v1/campaigns/fetch', {
      params: { query: { placement: 'header_banner', device: 'tablet', tokens: true } },
      headers: partner(),
    });
    real(tokened, 200);
    expect(tokened.data?.data[0]?.token).toEqual(expect.any(String));
    expect(tokened.response.headers.get('cache-control')).toBe('private, no-store');

    // The document lists the three devices, so neither the types nor Prism take another word.
    const tv = await client.GET('/api/v1/campaigns/fetch', {
      params: {
        query: {
          placement: 'header_banner',
          // @ts-expect-error: a device the document does not list
          device: 'tv',
        },
      },
      headers: partner(),
    });
    expect(tv.response.status).toBe(422);
    expect(tv.response.headers.get('content-type')).toMatch(/problem\+json/);

    const unknown = await client.GET('/api/v1/campaigns/fetch', {
      params: { query: { placement: 'nowhere' } },
      headers: partner(),
    });
    real(unknown, 400);
    expect(unknown.error).toEqual({ status: 'error', message: 'unknown placement: nowhere' });

    const refused = await client.GET('/api/v1/campaigns/fetch', {
      params: { query: { placement: 'header_banner' } },
      headers: { Authorization: 'Bearer plc_not-a-key' },
    });
    real(refused, 401);
    expect(refused.error).toEqual({ status: 'error', message: 'unauthorized' });
  });

  it('tracks: success, 400, 404 and 415 are the server’s answers', async () => {
    for (const kind of ['impression', 'click'] as const) {
      const route = `/api/v1/campaigns/${kind}` as const;
      const body = { campaignId, placement: 'header_banner', location: 'US', device: 'desktop' } as const;
      const ok = await client.POST(route, { body, headers: partner() });
      real(ok, 200);
      expect(ok.data?.status).toBe('success');

      const nowhere = await client.POST(route, { body: { ...body, location: 'ZZ' }, headers: partner() });
      real(nowhere, 400);
      expect(nowhere.error?.message).toBe('location must be an ISO 3166-1 alpha-2 country code');

      const missing = await client.POST(route, {
        body: { ...body, campaignId: 999_999 },
        headers: partner(),
      });
      real(missing, 404);
      expect(missing.error?.message).toBe('campaign not found');
    }
  });

  it('tracks: a body that is not JSON gets the server’s 415', async () => {
    // A request the document does not allow is refused by Prism itself (415 too, but its own), so
    // the server's answer is seen through a proxy that checks only responses.
    const lenient = await startPrism(path.join(directory, 'openapi.json'), t.url, [
      '--validate-request=false',
    ]);
    try {
      const notJson = await createClient<paths>({ baseUrl: lenient.url }).POST(
        '/api/v1/campaigns/impression',
        {
          body: { campaignId, placement: 'header_banner' },
          bodySerializer: () => 'campaignId=1',
          headers: { ...partner(), 'Content-Type': 'application/x-www-form-urlencoded' },
        },
      );
      real(notJson, 415);
      expect(notJson.error?.message).toBe('Content-Type must be application/json');
    } finally {
      await lenient.stop();
    }
  });

  it('manages: representative management routes answer as documented', async () => {
    real(await client.GET('/admin/v1/partners', { headers: admin() }), 200);
    const created = await client.POST('/admin/v1/partners', { body: { name: 'Proxied' }, headers: admin() });
    real(created, 201);
    const partnerId = created.data!.data.id;
    const missing = await client.GET('/admin/v1/partners/{id}', on(999_999));
    real(missing, 404);

    // Issuing and rotating keys and lifecycle actions need no body.
    const key = await client.POST('/admin/v1/partners/{id}/keys', on(partnerId));
    real(key, 201);
    const keyId = key.data!.data.id;
    const rotated = await client.POST('/admin/v1/keys/{id}/rotate', on(keyId));
    real(rotated, 201);
    const limits = await client.PUT('/admin/v1/keys/{id}/rate-limits', {
      ...on(rotated.data!.data.id),
      body: { fetchRate: 1_000_000, eventsBurst: null },
    });
    real(limits, 200);
    const paused = await client.POST('/admin/v1/campaigns/{id}/pause', on(campaignId));
    real(paused, 200);
    const conflict = await client.POST('/admin/v1/campaigns/{id}/approve', on(campaignId));
    real(conflict, 409);

    const csv = await client.GET('/admin/v1/reports', {
      params: { query: { format: 'csv', groupBy: 'campaign' } },
      headers: admin(),
      parseAs: 'text',
    });
    real(csv, 200);
    expect(csv.response.headers.get('content-type')).toMatch(/^text\/csv/);
    const report = await client.GET('/admin/v1/reports', { headers: admin() });
    real(report, 200);

    const metrics = await client.GET('/metrics', { headers: { Authorization: 'Bearer pla_wrong' } });
    real(metrics, 401);
    expect(metrics.error).toEqual({ status: 'error', message: 'unauthorized' });
    const exposed = await client.GET('/metrics', { headers: admin(), parseAs: 'text' });
    real(exposed, 200);
  });
});
