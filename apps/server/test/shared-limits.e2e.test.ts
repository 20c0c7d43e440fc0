import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, tempDir, type TestDatabase } from './helpers/engines.js';
import { cliJson, ensureBuilt, startServerProcess, type ServerProcess } from './helpers/process.js';
import { OwnRedis } from './helpers/redis.js';
import { Teardown } from './helpers/teardown.js';

/**
 * Rate limits with `PLACARD_REDIS_URL` (D7), as operators run them: built server processes sharing
 * one PostgreSQL database and one Redis.
 */
describe('rate limits shared through Redis', () => {
  let database: TestDatabase;
  let redis: OwnRedis;
  let env: Record<string, string>;
  let servers: ServerProcess[];
  const [SHARED_RATE, SHARED_BURST] = [40, 40];
  let sharedKey: string;
  // Whatever set-up made is removed however it ended (a timeout included): the database too.
  const teardown = new Teardown();
  const dataDir = tempDir('placard-limits-');
  teardown.defer(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** Creates a partner and a key with the given fetch limit; returns the key. */
  function keyWithFetchLimit(partner: string, rate: number, burst: number): string {
    cliJson(['partners', 'create', partner], env);
    const key = cliJson<{ id: number; key: string }>(['keys', 'create', '--partner', partner], env);
    cliJson(
      ['keys', 'limits', String(key.id), '--fetch-rate', String(rate), '--fetch-burst', String(burst)],
      env,
    );
    return key.key;
  }

  /** Waits until the instance knows `apiKey` (the change feed), without taking from its fetch bucket. */
  const knows = (server: ServerProcess, apiKey: string) =>
    expect
      .poll(
        async () => {
          const probe = await fetch(`${server.url}/api/v1/campaigns/impression`, {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}` },
          });
          await probe.arrayBuffer();
          return probe.status;
        },
        { timeout: 20_000 },
      )
      .not.toBe(401);

  const fetchFrom = (server: ServerProcess, apiKey: string) =>
    fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
      headers: { authorization: `Bearer ${apiKey}` },
    }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });

  beforeAll(async () => {
    ensureBuilt();
    [database, redis] = await Promise.all([
      teardown.track(createDatabase('postgres'), (made) => made.drop()),
      teardown.track(OwnRedis.start(), (made) => made.stop()),
    ]);
    env = { PLACARD_DATA_DIR: dataDir, PLACARD_DATABASE_URL: database.url, PLACARD_REDIS_URL: redis.url };
    // Migrate once before the instances start, as a deployment would.
    cliJson(['migrate'], env);
    // The first test's key and its limits exist before the instances start, so each loads them with
    // the key: a key created later is known at once, its own limits only once the change reaches it.
    sharedKey = keyWithFetchLimit('Shared Limits', SHARED_RATE, SHARED_BURST);
    const start = () => teardown.track(startServerProcess(env), (made) => made.stop());
    servers = [await start(), await start()];
  });
  afterAll(() => teardown.run());

  it('two instances together let through no more than the key’s limit (within 5%)', async () => {
    const [rate, burst, apiKey] = [SHARED_RATE, SHARED_BURST, sharedKey];
    for (const server of servers) await knows(server, apiKey);
    for (const server of servers) {
      const ready = (await (await fetch(`${server.url}/readyz`)).json()) as {
        checks: Record<string, string>;
      };
      expect(ready.checks['rateLimits']).toBe('ok');
    }

    // 16 clients alternate between the two instances as fast as they are answered, for 3 s.
    const counts = new Map<number, number>();
    const started = Date.now();
    const runFor = 3_000;
    await Promise.all(
      Array.from({ length: 16 }, async (_, client) => {
        for (let i = 0; Date.now() - started < runFor; i++) {
          const status = await fetchFrom(servers[(client + i) % 2], apiKey);
          counts.set(status, (counts.get(status) ?? 0) + 1);
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const allowed = burst + rate * seconds;
    const passed = counts.get(200) ?? 0;
    expect([...counts.keys()].sort()).toEqual([200, 429]);
    // Each instance alone would let `allowed` through: together, without sharing, nearly twice.
    expect(passed).toBeLessThanOrEqual(allowed * 1.05);
    expect(passed).toBeGreaterThanOrEqual(allowed * 0.9);
  });

  it('bills a click on one instance that consumes an impression stored through the other (D15)', async () => {
    cliJson(['partners', 'create', 'Click Credits'], env);
    const { key } = cliJson<{ key: string }>(['keys', 'create', '--partner', 'Click Credits'], env);
    const file = `${dataDir}/credits.json`;
    fs.writeFileSync(
      file,
      JSON.stringify({
        advertisers: [
          {
            name: 'Credits Advertiser',
            campaigns: [
              {
                title: 'Clicked',
                destinationUrl: 'https://credits.example/',
                status: 'running',
                placements: ['header_banner'],
              },
            ],
          },
        ],
      }),
    );
    const [campaignId] = cliJson<{ campaignIds: number[] }>(
      ['campaigns', 'import', file, '--approve'],
      env,
    ).campaignIds;
    const [one, two] = servers;
    const track = async (server: ServerProcess, kind: 'impression' | 'click') => {
      const response = await fetch(`${server.url}/api/v1/campaigns/${kind}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ campaignId, placement: 'header_banner' }),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    };
    // The campaign reaches both instances' indexes within their refresh interval.
    for (const server of [one, two]) {
      await expect
        .poll(
          async () =>
            (
              await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
                headers: { authorization: `Bearer ${key}` },
              })
            ).text(),
          { timeout: 20_000 },
        )
        .toContain('Clicked');
    }
    await track(one, 'impression');
    await track(two, 'click'); // consumes the impression stored through the other instance
    // A double click, on the first instance: a `double click` when it comes within half a second of
    // the first (the last click is shared too), else nothing is left to consume; never billed.
    await track(one, 'click');
    const rows = cliJson<{
      rows: { verdict: string; reason: string | null; clicks: number; nonBillableClicks: number }[];
    }>(['report', '--campaign', String(campaignId), '--group-by', 'verdict,reason', '--json'], env).rows;
    expect(
      rows.map(({ verdict, reason, clicks, nonBillableClicks }) => [
        verdict,
        reason,
        clicks,
        nonBillableClicks,
      ]),
    ).toEqual([
      ['counted', null, 1, 0],
      ['invalid', expect.stringMatching(/^(double click|click without impression)$/), 0, 1],
    ]);
  });

  it('keeps serving with per-instance limits when Redis stops mid-run, says so, and recovers', async () => {
    const apiKey = keyWithFetchLimit('Redis Outage', 1_000, 5);
    const [server] = servers;
    await knows(server, apiKey);

    await redis.stop();
    const during: number[] = [];
    for (let i = 0; i < 20; i++) during.push(await fetchFrom(server, apiKey));
    // Every answer is a served fetch or a limit, none an error: the instance limits on its own.
    expect(during.every((status) => status === 200 || status === 429)).toBe(true);
    expect(during.filter((status) => status === 200).length).toBeGreaterThan(0);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('degraded');
    // Without an admin token the check names no host or port of the lost Redis.
    expect(body.checks['rateLimits']).toMatch(
      /^redis unavailable since [\d:.TZ-]+: limits are per instance$/,
    );
    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${server.summary.adminToken}` },
    });
    expect(await metrics.text()).toContain('placard_rate_limits_mode{mode="degraded"} 1');
    await expect
      .poll(() =>
        server.output.some((line) => line.includes('redis is unavailable: rate limits are per instance')),
      )
      .toBe(true);

    await redis.restart();
    await expect
      .poll(async () => ((await (await fetch(`${server.url}/readyz`)).json()) as { status: string }).status, {
        timeout: 20_000,
      })
      .toBe('ready');
    expect(server.output.some((line) => line.includes('redis is back: rate limits are shared again'))).toBe(
      true,
    );
  });
});
