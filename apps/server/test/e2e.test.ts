import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { cliJson, ensureBuilt, runCli, startServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * The whole product as a user runs it: the built server as a process with its own data directory,
 * set up through the `placard` CLI, called over real HTTP.
 */
describe('end to end: built server, CLI and real HTTP', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;
  let apiKey: string;
  let keyId: number;
  let campaignIds: number[];

  // A connection each: a `placard` command blocks this process (spawnSync) for as long as it runs,
  // tens of seconds on a busy machine, and a kept-alive connection the server closed meanwhile
  // would be reused before this process has seen it close ("fetch failed: other side closed").
  const call = (pathAndQuery: string, init: RequestInit = {}, key = apiKey) =>
    fetch(`${server.url}${pathAndQuery}`, {
      ...init,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        connection: 'close',
        ...init.headers,
      },
    });

  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDir('placard-e2e-');
    env = { PLACARD_DATA_DIR: dataDir, PLACARD_LOG_LEVEL: 'debug', PLACARD_ACCESS_LOG: 'true' };
    // An operator creates the store first; the other commands refuse one that does not exist.
    cliJson(['migrate'], env);

    const partner = cliJson<{ id: number; name: string }>(['partners', 'create', 'E2E Publisher'], env);
    expect(partner.name).toBe('E2E Publisher');
    const created = cliJson<{ id: number; key: string; prefix: string }>(
      ['keys', 'create', '--partner', 'E2E Publisher'],
      env,
    );
    apiKey = created.key;
    keyId = created.id;
    expect(apiKey.startsWith(created.prefix)).toBe(true);

    const file = path.join(dataDir, 'campaigns.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        advertisers: [
          {
            name: 'E2E Advertiser',
            campaigns: [
              {
                title: 'Everywhere',
                destinationUrl: 'https://e2e.example/a',
                status: 'running',
                placements: ['sidebar_top'],
              },
              {
                title: 'US mobile',
                category: 'sports',
                destinationUrl: 'https://e2e.example/b',
                status: 'running',
                placements: ['sidebar_top'],
                countries: ['US'],
                devices: ['mobile'],
              },
              {
                title: 'Paused',
                destinationUrl: 'https://e2e.example/c',
                status: 'paused',
                placements: ['sidebar_top'],
              },
            ],
          },
        ],
      }),
    );
    const summary = cliJson<{ campaignsCreated: number; campaignIds: number[] }>(
      ['campaigns', 'import', file, '--approve'],
      env,
    );
    expect(summary.campaignsCreated).toBe(3);
    campaignIds = summary.campaignIds;

    server = await startServerProcess(env);
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('fetches running campaigns with targeting over HTTP', async () => {
    const all = await call('/api/v1/campaigns/fetch?placement=sidebar_top');
    expect(all.status).toBe(200);
    expect(all.headers.get('x-request-id')).toBeTruthy();
    const body = (await all.json()) as { status: string; count: number; data: Array<{ title: string }> };
    expect(body.status).toBe('success');
    expect(body.data.map((c) => c.title).sort()).toEqual(['Everywhere', 'US mobile']);
    expect(body.count).toBe(2);

    const gb = (await (await call('/api/v1/campaigns/fetch?placement=sidebar_top&location=GB')).json()) as {
      data: Array<{ title: string }>;
    };
    expect(gb.data.map((c) => c.title)).toEqual(['Everywhere']);
  });

  it('tracks an impression and a click, stored before the answer', async () => {
    const body = JSON.stringify({
      campaignId: campaignIds[1],
      placement: 'sidebar_top',
      location: 'US',
      device: 'mobile',
    });
    const impression = await call('/api/v1/campaigns/impression', { method: 'POST', body });
    expect(impression.status).toBe(200);
    expect(await impression.json()).toEqual({
      status: 'success',
      message: 'Impression tracked successfully',
    });
    const click = await call('/api/v1/campaigns/click', { method: 'POST', body });
    expect(click.status).toBe(200);
    expect(await click.json()).toEqual({ status: 'success', message: 'Click tracked successfully' });

    const paused = await call('/api/v1/campaigns/click', {
      method: 'POST',
      body: JSON.stringify({ campaignId: campaignIds[2], placement: 'sidebar_top' }),
    });
    expect(paused.status).toBe(404);
    const missing = await call('/api/v1/campaigns/impression', {
      method: 'POST',
      body: JSON.stringify({ placement: 'sidebar_top' }),
    });
    expect(await missing.json()).toEqual({ status: 'error', message: 'campaignId is required' });
  });

  it('reports the tracked events at once through `placard report`, as a table, JSON and CSV', () => {
    const args = ['report', '--group-by', 'campaign,country,device'];
    const table = runCli(args, env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /period\s+campaign\s+campaignName\s+country\s+device\s+impressions\s+clicks\s+ctr/,
    );
    // Each campaign id with its title beside it.
    expect(table.stdout).toMatch(
      new RegExp(`\\d{4}-\\d{2}-\\d{2}\\s+${campaignIds[1]}\\s+US mobile\\s+US\\s+mobile\\s+1\\s+1\\s+1\\s`),
    );
    const json = cliJson<{ totals: { impressions: number; clicks: number; ctr: number } }>(args, env);
    expect(json.totals).toMatchObject({ impressions: 1, clicks: 1, ctr: 1 });
    const csv = runCli([...args, '--csv'], env);
    expect(csv.stdout.split('\r\n')[0]).toBe(
      'period,campaign,campaignName,country,device,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency',
    );
    const bad = runCli(['report', '--granularity', 'week'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('granularity must be one of: minute, hour, day');
  });

  it('serves a change made through the CLI while running, through the change feed', async () => {
    const gbTitles = async () =>
      (
        (await (await call('/api/v1/campaigns/fetch?placement=sidebar_top&location=GB')).json()) as {
          data: Array<{ title: string }>;
        }
      ).data.map((c) => c.title);
    expect(await gbTitles()).toEqual(['Everywhere']);
    const updated = cliJson<{ countries: string[]; status: string }>(
      ['campaigns', 'update', String(campaignIds[1]), '--countries', 'US,GB'],
      env,
    );
    // Targeting is not creative: the campaign stays running (D11).
    expect(updated).toMatchObject({ countries: ['GB', 'US'], status: 'running' });
    await eventually(async () => (await gbTitles()).includes('US mobile'), 'the new targeting served');

    cliJson(['campaigns', 'pause', String(campaignIds[0])], env);
    await eventually(async () => {
      const body = (await (await call('/api/v1/campaigns/fetch?placement=sidebar_top')).json()) as {
        count: number;
      };
      return body.count === 1;
    }, 'the paused campaign no longer served');
  });

  it('lists through the CLI, with tables for people and JSON for scripts', () => {
    const table = runCli(['campaigns', 'list', '--placement', 'sidebar_top'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+ADVERTISER\s+ADVERTISERNAME\s+STATUS/);
    expect(table.stdout).toMatch(/^\d+\s+\d+\s+E2E Advertiser\s+running\s/m);
    const keys = cliJson<Array<{ prefix: string; status: string }>>(['keys', 'list'], env);
    expect(keys).toEqual([expect.objectContaining({ status: 'active', prefix: apiKey.slice(0, 10) })]);
    expect(JSON.stringify(keys)).not.toContain(apiKey);
  });

  it('fails clearly with a non-zero exit on bad input', () => {
    const missing = runCli(['campaigns', 'import', path.join(dataDir, 'nope.json')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');

    const file = path.join(dataDir, 'bad.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        advertisers: [{ name: 'Bad', campaigns: [{ title: 'x', placements: ['nowhere'] }] }],
      }),
    );
    const bad = runCli(['campaigns', 'import', file, '--json'], env);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as {
      status: string;
      problems: Array<{ field: string; message: string }>;
    };
    expect(report.status).toBe('error');
    expect(report.problems).toContainEqual({
      field: 'advertisers[0].campaigns[0].destinationUrl',
      message: 'is required: an absolute http or https URL',
    });
    expect(report.problems).toContainEqual({
      field: 'advertisers[0].campaigns[0].placements',
      message: 'unknown placement "nowhere"',
    });

    expect(runCli(['keys', 'revoke', '999999'], env)).toMatchObject({ code: 1 });
    expect(runCli(['campaigns', 'update', 'abc', '--title', 'x'], env).code).toBe(1);
    expect(runCli(['no-such-command'], env).code).toBe(2);
    const badConfig = runCli(['campaigns', 'list'], { ...env, PLACARD_PORT: 'eighty' });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toContain('PLACARD_PORT must be an integer');
  });

  it('refuses a key revoked through the CLI while running, through the change feed', async () => {
    cliJson(['keys', 'revoke', String(keyId)], env);
    await eventually(
      async () => (await call('/api/v1/campaigns/fetch?placement=sidebar_top')).status === 401,
      'the revoked key refused',
    );
  });

  it('logs one JSON line per request, and never the key, its digest, cookies or the Authorization header', async () => {
    // Key material in every place a careless log could pick it up.
    const leaky = await call(`/api/v1/campaigns/fetch?placement=sidebar_top&key=${apiKey}`, {
      headers: { cookie: `session=${apiKey}`, 'x-request-id': 'e2e-log-check' },
    });
    // The key was revoked by an earlier test: a refusal is logged the same way.
    expect(leaky.status).toBe(401);
    // The access log line is written once the answer is: wait for it rather than for a set time.
    const logged = () => server.output.find((entry) => entry.includes('"reqId":"e2e-log-check"'));
    await eventually(() => logged() !== undefined, 'the request logged');
    const log = server.output.join('\n');
    const line = logged();
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      msg: 'request',
      route: '/api/v1/campaigns/fetch',
      status: 401,
      method: 'GET',
    });
    const digest = createHash('sha256').update(apiKey).digest('hex');
    for (const secret of [apiKey, apiKey.slice(4), digest, 'session=']) expect(log).not.toContain(secret);
    expect(log.toLowerCase()).not.toContain('authorization');
  });

  it('shuts down cleanly on SIGTERM', async () => {
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
