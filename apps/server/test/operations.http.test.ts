import { describe, expect, it } from 'vitest';
import { eachTestWithCampaign, type TestApp } from './helpers/app.js';

describe('health, readiness and metrics', () => {
  let t: TestApp;
  let campaignId: number;
  eachTestWithCampaign((ready) => ({ app: t, campaignId } = ready));

  const get = (url: string, token?: string) =>
    t.request({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('/healthz answers while the process is alive', async () => {
    const res = await get('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz checks the store, the migrations and shutdown, naming the failing check and its details only to admins', async () => {
    const ready = await get('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ready',
      checks: {
        shutdown: 'ok',
        store: 'ok',
        migrations: 'ok',
        rateLimits: 'in memory (limits per instance)',
      },
      lastCheckAgeMs: expect.any(Number),
    });

    const ping = t.store.ping.bind(t.store);
    t.store.ping = async () => {
      throw new Error('connect ECONNREFUSED 10.0.3.7:5432');
    };
    // The background check sees it (here at once rather than on its next turn).
    await t.services.appDeps.readiness.check();
    // Anyone sees which check fails and its class, never the driver's message with its address.
    const unreachable = await get('/readyz');
    expect(unreachable.statusCode).toBe(503);
    expect(unreachable.headers['retry-after']).toBe('1');
    expect(unreachable.json()).toMatchObject({
      status: 'error',
      message: 'not ready: store (unavailable)',
      checks: { store: 'unavailable', migrations: 'ok' },
    });
    expect(unreachable.body).not.toContain('10.0.3.7');
    // An admin token sees the detail.
    const detailed = await get('/readyz', t.adminToken);
    expect(detailed.statusCode).toBe(503);
    expect(detailed.json()).toMatchObject({
      message: 'not ready: store (connect ECONNREFUSED 10.0.3.7:5432)',
      checks: { store: 'connect ECONNREFUSED 10.0.3.7:5432' },
    });
    t.store.ping = ping;
    await t.services.appDeps.readiness.check();
    expect((await get('/readyz')).statusCode).toBe(200);

    t.services.appDeps.shutdown.begin();
    const closing = await get('/readyz');
    expect(closing.statusCode).toBe(503);
    expect(closing.json()).toMatchObject({ message: 'not ready: shutdown (shutting down)' });
  });

  it('/readyz answers from the last background check while the store is stalled, with its age, asking the store nothing', async () => {
    // Only the requests may ping here: the background check is paused for the count.
    const { readiness } = t.services.appDeps;
    await readiness.stop();
    // A store that never answers, as one queued behind a heavy load looks to a request.
    const ping = t.store.ping.bind(t.store);
    let pings = 0;
    t.store.ping = () => {
      pings++;
      return new Promise<void>(() => undefined);
    };
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => get('/readyz')));
      expect(pings).toBe(0);
      for (const answer of answers) {
        expect(answer.statusCode).toBe(200);
        expect(answer.json()).toMatchObject({ status: 'ready', checks: { store: 'ok' } });
        expect(answer.json().lastCheckAgeMs).toEqual(expect.any(Number));
      }
    } finally {
      t.store.ping = ping;
      await readiness.start();
    }
  });

  it('/metrics needs an admin token and exposes requests, events, batches, limits and the index', async () => {
    expect((await get('/metrics')).statusCode).toBe(401);
    expect((await t.fetch('placement=header_banner')).statusCode).toBe(200);
    expect((await t.track('impression', { campaignId, placement: 'header_banner' })).statusCode).toBe(200);
    await t.partners.setKeyLimits(t.apiKeyId, { fetchRate: 1, fetchBurst: 1 });
    await t.state.refresh();
    expect((await t.fetch('placement=header_banner')).statusCode).toBe(200);
    expect((await t.fetch('placement=header_banner')).statusCode).toBe(429);

    const res = await get('/metrics', t.adminToken);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(text).toMatch(
      /placard_http_request_duration_seconds_count\{route="\/api\/v1\/campaigns\/fetch",method="GET",status="200"\} 2/,
    );
    expect(text).toMatch(
      /placard_http_request_duration_seconds_count\{route="\/api\/v1\/campaigns\/fetch",method="GET",status="429"\} 1/,
    );
    for (const sample of [
      'placard_events_total{kind="impression",verdict="counted"} 1',
      'placard_event_batch_size_count 1',
      'placard_event_commit_seconds_count 1',
      'placard_rate_limited_total{operation="fetch"} 1',
      'placard_rate_limits_mode{mode="memory"} 1',
      'placard_rate_limits_mode{mode="shared"} 0',
      'placard_index_campaigns 1',
    ])
      expect(text).toContain(sample);
    expect(text).toMatch(/placard_index_refresh_age_seconds \d/);
    expect(text).toMatch(/placard_process_resident_memory_bytes \d+/);
    expect(text).toMatch(/placard_event_loop_utilization [\d.]+/);
  });
});
