import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  KeySuspendedError,
  NotFoundError,
  PlacardClient,
  PlacardError,
  RateLimitedError,
  ServerError,
  UsageError,
  ValidationError,
  type ClientOptions,
} from '../src/index.js';
import { assertServerSide, BROWSER_MESSAGE } from '../src/environment.js';

const CAMPAIGN = {
  id: 7,
  title: 'Tech Conference',
  destinationUrl: 'https://example.com/conference',
  status: 'running',
  createdAt: '2025-01-15T10:30:00Z',
};

type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | 'network' | 'hang';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * A client whose transport answers from a script and whose clock only moves when it sleeps, so
 * retry timing is exact and instant.
 */
function scripted(script: Scripted[], options: Partial<ClientOptions> = {}) {
  let now = 1_000_000;
  const sent: Sent[] = [];
  const sleeps: number[] = [];
  const fetch = (async (input: URL, init: RequestInit) => {
    sent.push({
      url: String(input),
      method: init.method ?? 'GET',
      headers: init.headers as Record<string, string>,
      body: init.body === undefined ? undefined : JSON.parse(init.body as string),
    });
    const next = script.shift() ?? { status: 200, body: { status: 'success', data: [], count: 0 } };
    if (next === 'network') throw new TypeError('fetch failed');
    if (next === 'hang') {
      return new Promise((_, reject) =>
        init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
      );
    }
    return new Response(next.body === undefined ? '' : JSON.stringify(next.body), {
      status: next.status,
      headers: { 'content-type': 'application/json', ...next.headers },
    });
  }) as typeof globalThis.fetch;
  const client = new PlacardClient({
    apiKey: 'pk_test',
    baseUrl: 'http://placard.test',
    fetch,
    clock: () => now,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    ...options,
  });
  return { client, sent, sleeps, advance: (ms: number) => (now += ms) };
}

const ok = (campaigns: unknown[] = [CAMPAIGN], headers: Record<string, string> = {}) => ({
  status: 200,
  body: { status: 'success', data: campaigns, count: campaigns.length },
  headers,
});
const fail = (status: number, message: string, headers: Record<string, string> = {}) => ({
  status,
  body: { status: 'error', message },
  headers,
});
const ACK = { status: 200, body: { status: 'success', message: 'Impression tracked successfully' } };

describe('retries', () => {
  it('retries 5xx with exponential backoff and full jitter, then returns the data', async () => {
    const { client, sent, sleeps } = scripted([
      fail(500, 'internal server error'),
      fail(503, 'service unavailable'),
      ok(),
    ]);
    const campaigns = await client.fetchCampaigns({ placement: 'header_banner' });
    expect(campaigns.map((c) => c.id)).toEqual([7]);
    expect(sent).toHaveLength(3);
    // random() = 0.5: half of the ceiling, which doubles from 200 ms.
    expect(sleeps).toEqual([100, 200]);
  });

  it('never retries sooner than Retry-After on 429', async () => {
    const { client, sleeps } = scripted([fail(429, 'Rate limit exceeded', { 'retry-after': '3' }), ok()]);
    await client.fetchCampaigns({ placement: 'header_banner' });
    expect(sleeps).toEqual([3_000]);
  });

  // Where the client gives up: the typed error of the last answer, with its fields, after so many attempts.
  for (const { title, script, retry, type, fields, attempts } of [
    {
      title: 'gives up after maxAttempts with the typed error of the last answer',
      script: Array<Scripted>(10).fill(fail(503, 'service unavailable')),
      retry: { maxAttempts: 3 },
      type: ServerError,
      fields: { status: 503 },
      attempts: 3,
    },
    {
      title: 'gives up when the next wait would pass maxElapsedMs, reporting the server’s retry time',
      script: [fail(429, 'Rate limit exceeded', { 'retry-after': '30' })],
      retry: { maxElapsedMs: 10_000 },
      type: RateLimitedError,
      fields: { retryAfterMs: 30_000 },
      attempts: 1,
    },
  ]) {
    it(title, async () => {
      const { client, sent } = scripted(script, { retry });
      const error = await client.fetchCampaigns({ placement: 'header_banner' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(type);
      expect(error).toMatchObject(fields);
      expect(sent).toHaveLength(attempts);
    });
  }

  it('stops at once on 401 and never retries it', async () => {
    const { client, sent } = scripted([fail(401, 'unauthorized')]);
    await expect(client.fetchCampaigns({ placement: 'header_banner' })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(sent).toHaveLength(1);
  });

  it('types 403 api key suspended, 400 and 404, none retried', async () => {
    const { client, sent } = scripted([
      fail(403, 'api key suspended'),
      fail(400, 'unknown placement: nowhere'),
      fail(404, 'campaign not found'),
    ]);
    await expect(client.fetchCampaigns({ placement: 'a' })).rejects.toBeInstanceOf(KeySuspendedError);
    await expect(client.fetchCampaigns({ placement: 'nowhere' })).rejects.toThrow(
      new ValidationError('unknown placement: nowhere', 400),
    );
    await expect(client.trackImpression(99, 'header_banner')).rejects.toBeInstanceOf(NotFoundError);
    expect(sent).toHaveLength(3);
  });

  it('retries network errors and timeouts', async () => {
    const { client, sent } = scripted(['network', 'hang', ok()], { timeoutMs: 20 });
    expect(await client.fetchCampaigns({ placement: 'header_banner' })).toHaveLength(1);
    expect(sent).toHaveLength(3);
    const failing = scripted(['hang', 'hang'], { timeoutMs: 20, retry: { maxAttempts: 2 } });
    await expect(failing.client.fetchCampaigns({ placement: 'header_banner' })).rejects.toThrow(
      /no answer within 20 ms/,
    );
  });

  it('stops waiting when the caller aborts', async () => {
    const controller = new AbortController();
    const { client, sent } = scripted([fail(503, 'service unavailable'), ok()], {
      sleep: async () => controller.abort(new Error('caller gave up')),
    });
    await expect(
      client.fetchCampaigns({ placement: 'header_banner' }, { signal: controller.signal }),
    ).rejects.toThrow('caller gave up');
    expect(sent).toHaveLength(1);
  });

  it('sends one Idempotency-Key for every attempt of a tracking call, and a new one per call', async () => {
    const { client, sent } = scripted([fail(503, 'service unavailable'), 'network', ACK, ACK]);
    await client.trackImpression(7, 'header_banner', { location: 'us', device: 'Mobile' as 'mobile' });
    await client.trackImpression(7, 'header_banner');
    const keys = sent.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(sent[0].body).toEqual({
      campaignId: 7,
      placement: 'header_banner',
      location: 'US',
      device: 'mobile',
    });
  });

  it('makes its Idempotency-Keys UUIDs version 7, in the order of its clock', async () => {
    // Keys in time order land side by side in the server's index of keys (a random UUID costs a
    // page of its own per event): the time in the first 48 bits, random bits after.
    const { client, sent } = scripted([ACK, ACK, ACK], { clock: () => at });
    let at = Date.parse('2026-11-28T08:00:00.000Z');
    await client.trackImpression(7, 'header_banner');
    at += 1;
    await client.trackImpression(7, 'header_banner');
    at += 60_000;
    await client.trackImpression(7, 'header_banner');
    const keys = sent.map((request) => request.headers['idempotency-key'] ?? '');
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const times = keys.map((key) => parseInt(key.replaceAll('-', '').slice(0, 12), 16));
    expect(times).toEqual([at - 60_001, at - 60_000, at]);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(3);
  });

  it('sends an event time given as a Date as RFC 3339 UTC, and a string as it is', async () => {
    const { client, sent } = scripted([ACK, ACK]);
    await client.trackImpression(7, 'header_banner', { occurredAt: new Date(Date.UTC(2026, 0, 31, 12)) });
    await client.trackClick(7, 'header_banner', { occurredAt: '2026-01-31T12:00:04Z' });
    expect(sent.map((request) => (request.body as { occurredAt?: string }).occurredAt)).toEqual([
      '2026-01-31T12:00:00.000Z',
      '2026-01-31T12:00:04Z',
    ]);
  });
});

describe('error codes', () => {
  /** The class and code of the error one scripted answer makes a fetch throw, with no retry. */
  async function failureOf(answer: Scripted): Promise<[string, string]> {
    const { client } = scripted([answer], { timeoutMs: 20, retry: { maxAttempts: 1 } });
    const error = (await client
      .fetchCampaigns({ placement: 'header_banner' })
      .catch((e: unknown) => e)) as PlacardError;
    expect(error).toBeInstanceOf(PlacardError);
    return [error.name, error.code];
  }

  it('gives every failure a stable code, telling cases of one status apart by the contract’s message only', async () => {
    const cases: Array<[Scripted, string, string]> = [
      [fail(400, 'placement parameter is required'), 'ValidationError', 'invalid_request'],
      [fail(401, 'unauthorized'), 'AuthenticationError', 'unauthorized'],
      [fail(403, 'api key suspended'), 'KeySuspendedError', 'key_suspended'],
      [fail(403, 'api keys must only be used from a server'), 'ForbiddenError', 'sent_from_browser'],
      [fail(403, 'API KEY SUSPENDED'), 'ForbiddenError', 'forbidden'],
      [fail(403, 'constructor'), 'ForbiddenError', 'forbidden'],
      [{ status: 403 }, 'ForbiddenError', 'forbidden'],
      [fail(404, 'campaign not found'), 'NotFoundError', 'not_found'],
      [
        fail(422, 'Idempotency-Key was already used for a different request'),
        'PlacardError',
        'idempotency_key_reused',
      ],
      [fail(422, 'occurredAt is too far in the past'), 'PlacardError', 'unprocessable'],
      [fail(404, 'api key suspended'), 'NotFoundError', 'not_found'],
      [fail(429, 'Rate limit exceeded'), 'RateLimitedError', 'rate_limited'],
      [fail(415, 'Content-Type must be application/json'), 'PlacardError', 'unexpected_status'],
      [fail(503, 'service unavailable'), 'ServerError', 'server_error'],
      [{ status: 502, body: '<html>' }, 'ServerError', 'server_error'],
      ['network', 'ServerError', 'network_error'],
      ['hang', 'ServerError', 'timeout'],
      [{ status: 200, body: { status: 'success' } }, 'ServerError', 'malformed_response'],
    ];
    const seen = [];
    for (const [answer] of cases) seen.push(await failureOf(answer));
    expect(seen).toEqual(cases.map(([, name, code]) => [name, code]));
  });

  it('gives the failures found before any request their codes too', async () => {
    const { client } = scripted([ok()]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    const codeOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as PlacardError).code;
      }
      return 'nothing thrown';
    };
    expect(await client.fetchCampaigns({ placement: '' }).catch((error: PlacardError) => error.code)).toBe(
      'invalid_request',
    );
    expect(codeOf(() => client.display(campaign, 'sidebar'))).toBe('usage');
    expect(codeOf(() => new PlacardClient({ apiKey: '', baseUrl: 'http://placard.test' }))).toBe(
      'configuration',
    );
  });
});

describe('responses', () => {
  it('never returns a malformed answer as data', async () => {
    for (const body of [
      { status: 'success', data: [CAMPAIGN], count: 2 },
      { status: 'success', data: [{ ...CAMPAIGN, destinationUrl: 'javascript:alert(1)' }], count: 1 },
      { status: 'success', data: [{ ...CAMPAIGN, status: 'paused' }], count: 1 },
      { status: 'error', message: 'x' },
      'not json',
    ]) {
      const { client } = scripted([{ status: 200, body }]);
      await expect(client.fetchCampaigns({ placement: 'header_banner' })).rejects.toThrow(
        /malformed response/,
      );
    }
  });
});

describe('cache', () => {
  it('reuses a fetch for the max-age the server sent, per normalised argument set', async () => {
    const { client, sent, advance } = scripted([
      ok([CAMPAIGN], { 'cache-control': 'private, max-age=5' }),
      ok([CAMPAIGN], { 'cache-control': 'private, max-age=5' }),
      ok([CAMPAIGN], { 'cache-control': 'private, max-age=5' }),
    ]);
    const first = await client.fetchCampaigns({ placement: 'header_banner', location: 'us' });
    expect(await client.fetchCampaigns({ placement: 'header_banner', location: 'US', limit: 10 })).toBe(
      first,
    );
    expect(sent).toHaveLength(1);
    await client.fetchCampaigns({ placement: 'header_banner', location: 'US', device: 'mobile' });
    expect(sent).toHaveLength(2);
    advance(5_000);
    await client.fetchCampaigns({ placement: 'header_banner', location: 'US' });
    expect(sent).toHaveLength(3);
  });

  it('shares one request between identical fetches in flight', async () => {
    const { client, sent } = scripted([ok([CAMPAIGN]), ok([CAMPAIGN])]);
    const [first, second] = await Promise.all([
      client.fetchCampaigns({ placement: 'header_banner' }),
      client.fetchCampaigns({ placement: 'header_banner' }),
    ]);
    expect(first).toBe(second);
    expect(sent).toHaveLength(1);
    // Without a max-age nothing is cached: once answered, the next call asks again.
    await client.fetchCampaigns({ placement: 'header_banner' });
    expect(sent).toHaveLength(2);
  });

  it('does not cache without max-age, with no-store, or failures', async () => {
    const { client, sent } = scripted([
      ok([CAMPAIGN]),
      ok([CAMPAIGN], { 'cache-control': 'private, no-store' }),
      fail(503, 'service unavailable'),
      ok([CAMPAIGN], { 'cache-control': 'private, max-age=5' }),
    ]);
    await client.fetchCampaigns({ placement: 'a' });
    await client.fetchCampaigns({ placement: 'a' });
    await client.fetchCampaigns({ placement: 'a' });
    expect(sent).toHaveLength(4);
  });
});

describe('local validation (the server’s rules, before any request)', () => {
  it('refuses bad arguments with the server’s messages and sends nothing', async () => {
    const { client, sent } = scripted([]);
    const cases: Array<[Parameters<PlacardClient['fetchCampaigns']>[0], string]> = [
      [{ placement: '' }, 'placement parameter is required'],
      [{ placement: 'a', limit: 0 }, 'limit must be an integer between 1 and 100'],
      [{ placement: 'a', limit: 101 }, 'limit must be an integer between 1 and 100'],
      [{ placement: 'a', limit: 2.5 }, 'limit must be an integer between 1 and 100'],
      [{ placement: 'a', location: 'ZZ' }, 'location must be an ISO 3166-1 alpha-2 country code'],
      [{ placement: 'a', device: 'watch' as 'mobile' }, 'device must be one of: mobile, desktop, tablet'],
    ];
    for (const [args, message] of cases) {
      await expect(client.fetchCampaigns(args)).rejects.toThrow(new ValidationError(message, 400));
    }
    await expect(client.trackClick(0, 'a')).rejects.toThrow('campaignId must be a positive integer');
    expect(sent).toHaveLength(0);
  });
});

describe('display handles', () => {
  it('report one impression per display, whatever calls impression() again', async () => {
    const { client, sent } = scripted([ok(), ACK, ACK]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    const display = client.display(campaign, 'header_banner', { device: 'desktop' });
    await Promise.all([display.impression(), display.impression()]);
    await display.impression();
    const another = client.display(campaign, 'header_banner');
    await another.impression();
    expect(sent.filter((request) => request.url.endsWith('/impression'))).toHaveLength(2);
  });

  it('refuse a click before the impression, and click after it', async () => {
    const { client, sent } = scripted([
      ok(),
      ACK,
      { status: 200, body: { status: 'success', message: 'Click tracked successfully' } },
    ]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    const display = client.display(campaign, 'header_banner');
    await expect(display.click()).rejects.toBeInstanceOf(UsageError);
    expect(sent).toHaveLength(1);
    await display.impression();
    await display.click();
    expect(sent.map((request) => new URL(request.url).pathname)).toEqual([
      '/api/v1/campaigns/fetch',
      '/api/v1/campaigns/impression',
      '/api/v1/campaigns/click',
    ]);
  });

  it('refuse a click when the impression failed', async () => {
    const { client } = scripted([ok(), fail(404, 'campaign not found')]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    const display = client.display(campaign, 'header_banner');
    await expect(display.impression()).rejects.toBeInstanceOf(NotFoundError);
    await expect(display.click()).rejects.toThrow(/was not recorded/);
  });

  it('only in the placement the campaign was fetched for, and only for fetched campaigns', async () => {
    const { client } = scripted([ok()]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    expect(() => client.display(campaign, 'sidebar_top')).toThrow(
      'campaign 7 was fetched for header_banner; it must not be rendered in sidebar_top',
    );
    expect(() => client.display({ ...CAMPAIGN, status: 'running' }, 'header_banner')).toThrow(
      /was not fetched/,
    );
  });
});

describe('where it runs', () => {
  it('refuses to run in a browser page or a web worker', () => {
    expect(() => assertServerSide({ document: {} })).toThrow(BROWSER_MESSAGE);
    class WorkerGlobalScope {}
    const worker = Object.assign(new WorkerGlobalScope(), { WorkerGlobalScope });
    expect(() => assertServerSide(worker)).toThrow(BROWSER_MESSAGE);
    expect(() => assertServerSide({})).not.toThrow();
  });

  it('refuses to construct where a document exists', () => {
    const scope = globalThis as { document?: unknown };
    scope.document = {};
    try {
      expect(() => new PlacardClient({ apiKey: 'k', baseUrl: 'http://x.test' })).toThrow(BROWSER_MESSAGE);
    } finally {
      delete scope.document;
    }
  });

  it('needs a key and an absolute base URL', () => {
    expect(() => new PlacardClient({ apiKey: '', baseUrl: 'http://x.test' })).toThrow('apiKey is required');
    expect(() => new PlacardClient({ apiKey: 'k', baseUrl: '/relative' })).toThrow(/baseUrl must be/);
  });

  it('refuses a base URL whose scheme, query or fragment it could not honour', () => {
    for (const baseUrl of ['ftp://x.test/placard', 'http://x.test/placard?tenant=1', 'http://x.test/#top']) {
      expect(() => new PlacardClient({ apiKey: 'k', baseUrl })).toThrow(/baseUrl must be/);
    }
  });
});

describe('the base URL', () => {
  it.each([
    ['http://placard.test', '/api/v1/campaigns/fetch'],
    ['http://placard.test/', '/api/v1/campaigns/fetch'],
    ['http://placard.test/placard', '/placard/api/v1/campaigns/fetch'],
    ['http://placard.test/placard/', '/placard/api/v1/campaigns/fetch'],
    ['http://placard.test/ads/placard', '/ads/placard/api/v1/campaigns/fetch'],
  ])('%s: requests go under its path (%s)', async (baseUrl, fetchPath) => {
    const { client, sent } = scripted([ok(), ACK], { baseUrl });
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    await client.display(campaign, 'header_banner').impression();
    expect(sent.map((request) => new URL(request.url).pathname)).toEqual([
      fetchPath,
      fetchPath.replace(/fetch$/, 'impression'),
    ]);
    expect(new URL(sent[0].url).searchParams.get('placement')).toBe('header_banner');
  });
});

describe('serve tokens (tokens: true)', () => {
  const CLICK_ACK = { status: 200, body: { status: 'success', message: 'Click tracked successfully' } };
  const tokened = (token: string) => ok([{ ...CAMPAIGN, token }], { 'cache-control': 'private, no-store' });

  it('asks for tokens, and sends each campaign’s back with its impression and click, with the end user’s signals', async () => {
    const { client, sent } = scripted([tokened('tok-1'), ACK, CLICK_ACK], { tokens: true });
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    expect(new URL(sent[0].url).searchParams.get('tokens')).toBe('true');
    expect(campaign.token).toBe('tok-1');
    const display = client.display(campaign, 'header_banner', {
      device: 'mobile',
      userAgent: 'Mozilla/5.0',
      userIp: '203.0.113.7',
    });
    await display.impression();
    await display.click();
    const event = {
      campaignId: 7,
      placement: 'header_banner',
      device: 'mobile',
      userAgent: 'Mozilla/5.0',
      userIp: '203.0.113.7',
      token: 'tok-1',
    };
    expect(sent.slice(1).map((request) => request.body)).toEqual([event, event]);
  });

  it('fetches afresh for every call, even with a max-age, and shares nothing in flight', async () => {
    const { client, sent } = scripted(
      [
        ok([{ ...CAMPAIGN, token: 'a' }], { 'cache-control': 'private, max-age=60' }),
        tokened('b'),
        tokened('c'),
      ],
      { tokens: true },
    );
    const first = await client.fetchCampaigns({ placement: 'header_banner' });
    const [second, third] = await Promise.all([
      client.fetchCampaigns({ placement: 'header_banner' }),
      client.fetchCampaigns({ placement: 'header_banner' }),
    ]);
    expect([first, second, third].map(([campaign]) => campaign.token)).toEqual(['a', 'b', 'c']);
    expect(sent).toHaveLength(3);
  });

  it('displays a tokened campaign once: another display needs another fetch', async () => {
    const { client } = scripted([tokened('tok-1')], { tokens: true });
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    client.display(campaign, 'header_banner');
    expect(() => client.display(campaign, 'header_banner')).toThrow(UsageError);
  });

  it('sends no token, and the contract’s fields only, without the option', async () => {
    const { client, sent } = scripted([ok(), ACK]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner' });
    expect(new URL(sent[0].url).searchParams.has('tokens')).toBe(false);
    await client.display(campaign, 'header_banner').impression();
    expect(sent[1].body).toEqual({ campaignId: 7, placement: 'header_banner' });
  });
});

describe('a viewer for frequency caps (D20)', () => {
  it('names the viewer on its fetch, never caches that answer, and sends the viewer with its events', async () => {
    const { client, sent } = scripted([
      ok([CAMPAIGN], { 'cache-control': 'private, max-age=60' }),
      ok(),
      ACK,
    ]);
    const [campaign] = await client.fetchCampaigns({ placement: 'header_banner', viewer: 'u-7f3a9c' });
    expect(new URL(sent[0].url).searchParams.get('viewer')).toBe('u-7f3a9c');
    // Another page view of the same user asks again: the answer was that user's at that moment.
    await client.fetchCampaigns({ placement: 'header_banner', viewer: 'u-7f3a9c' });
    expect(sent).toHaveLength(2);
    await client.display(campaign, 'header_banner', { viewer: 'u-7f3a9c' }).impression();
    expect(sent[2].body).toEqual({ campaignId: 7, placement: 'header_banner', viewer: 'u-7f3a9c' });
  });
});
