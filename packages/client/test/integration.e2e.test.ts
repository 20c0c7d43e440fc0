import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson } from '../../../apps/server/test/helpers/process.js';
import { startPlacard, type RunningPlacard } from '../../../apps/server/test/helpers/running-placard.js';
import {
  AuthenticationError,
  KeySuspendedError,
  NotFoundError,
  PlacardClient,
  RateLimitedError,
  type ClientOptions,
} from '../src/index.js';

type Fault = 'forward' | 'fail-before' | 'fail-after';

/**
 * A proxy in front of the real server that can fail requests: `fail-before` answers without
 * forwarding, `fail-after` forwards (so the server acts) and then answers with an error instead, as
 * when an answer is lost on the way back. With a `prefix` it publishes the server under that path
 * only, as a reverse proxy does (`/placard/api/v1/...` → `/api/v1/...`), and answers 404 elsewhere.
 */
async function faultyProxy(
  upstream: string,
  plan: (index: number, path: string) => [Fault, number?],
  prefix = '',
) {
  let index = 0;
  const seen: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A forward that fails fails the test through the client that waited for its answer.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    request.on('end', async () => {
      const url = request.url ?? '/';
      seen.push(`${request.method} ${url} ${String(request.headers['idempotency-key'] ?? '')}`);
      if (!url.startsWith(`${prefix}/`)) {
        response.writeHead(404, { 'content-type': 'text/plain' });
        return response.end('not published here');
      }
      const path = url.slice(prefix.length);
      const [fault, status = 503] = plan(index++, path);
      const failWith = () => {
        response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
        response.end(
          JSON.stringify({
            status: 'error',
            message: status === 503 ? 'service unavailable' : 'internal server error',
          }),
        );
      };
      if (fault === 'fail-before') return failWith();
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          ([name]) => !['host', 'connection', 'content-length'].includes(name),
        ),
      ) as Record<string, string>;
      const answer = await fetch(`${upstream}${path}`, {
        method: request.method ?? 'GET',
        headers,
        ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (fault === 'fail-after') return failWith();
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// New keys reach the server through its change feed, and the 429 test waits out a limit: seconds on
// an idle machine, several times that on a busy one, within the suite's timeout (for hangs).
describe('@placard/client against the real server (a started process)', () => {
  let placard: RunningPlacard;
  let key: string;
  let campaignId: number;
  const client = (options: Partial<ClientOptions> = {}) =>
    new PlacardClient({ apiKey: key, baseUrl: placard.url, retry: { baseDelayMs: 20 }, ...options });

  beforeAll(async () => {
    placard = await startPlacard([
      {
        title: 'SDK campaign',
        description: 'Shown through the client',
        destinationUrl: 'https://advertiser.example/sdk',
        status: 'running',
        placements: ['header_banner'],
      },
    ]);
    campaignId = placard.campaignIds[0]!;
    key = (await placard.newKey('SDK Partner')).key;
  });
  afterAll(() => placard?.stop());

  it('runs the whole delivery cycle: fetch, display, one impression, one click, counted once each', async () => {
    const sdk = client();
    const campaigns = await sdk.fetchCampaigns({
      placement: 'header_banner',
      location: 'us',
      device: 'desktop',
    });
    expect(campaigns.map((campaign) => campaign.id)).toEqual([campaignId]);
    // Served from the cache for the max-age the server sent: the same array.
    expect(await sdk.fetchCampaigns({ placement: 'header_banner', location: 'US', device: 'desktop' })).toBe(
      campaigns,
    );
    const display = sdk.display(campaigns[0], 'header_banner', { location: 'US', device: 'desktop' });
    await display.impression();
    await display.impression();
    await display.click();
    expect(await placard.counts(campaignId)).toEqual({
      impressions: 1,
      clicks: 1,
      nonBillableImpressions: 0,
      nonBillableClicks: 0,
    });
  });

  it('401: an unknown key stops at once, without retrying', async () => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const sdk = client({ apiKey: 'pk_unknown_key_for_tests_0000000000', fetch: counting });
    await expect(sdk.fetchCampaigns({ placement: 'header_banner' })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(calls).toBe(1);
  });

  it('403: a suspended key is a KeySuspendedError', async () => {
    const suspended = await placard.newKey('Suspended Partner');
    cliJson(['keys', 'suspend', String(suspended.id), '--reason', 'click fraud'], placard.env);
    const sdk = client({ apiKey: suspended.key, cache: false });
    await expect
      .poll(
        () =>
          sdk.fetchCampaigns({ placement: 'header_banner' }).then(
            () => 'served',
            (error: Error) => error.name,
          ),
        // The change feed brings the suspension within about a second; a busy machine is slower.
        { timeout: 20_000 },
      )
      .toBe('KeySuspendedError');
    await expect(sdk.fetchCampaigns({ placement: 'header_banner' })).rejects.toBeInstanceOf(
      KeySuspendedError,
    );
    await expect(sdk.fetchCampaigns({ placement: 'header_banner' })).rejects.toMatchObject({
      code: 'key_suspended',
    });
  });

  it('404: an unknown campaign is a NotFoundError', async () => {
    await expect(client().trackImpression(987_654, 'header_banner')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('429: a key over its limit gets RateLimitedError with the server’s wait, or succeeds after waiting it', async () => {
    // The lowest limit a key can have, a token a second after a burst of 2: of eight fetches sent
    // together at least one is refused unless answering them took the server over six seconds.
    const limited = await placard.newKey('Limited Partner', { rate: 1, burst: 2 });
    const once = client({ apiKey: limited.key, cache: false, retry: { maxAttempts: 1 } });
    const outcomes = await Promise.all(
      // Different argument sets: identical fetches in flight would share one request.
      Array.from({ length: 8 }, (_, index) =>
        once.fetchCampaigns({ placement: 'header_banner', limit: index + 1 }).then(
          () => 'ok',
          (error: unknown) => error,
        ),
      ),
    );
    const refused = outcomes.filter(
      (outcome): outcome is RateLimitedError => outcome instanceof RateLimitedError,
    );
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0].retryAfterMs).toBeGreaterThanOrEqual(1_000);

    // The patient client waits out a 429 and is then served. Whether its first attempt is refused
    // depends on how long the machine took since the burst; when it is, the wait is checked.
    const statuses: number[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const patient = client({ apiKey: limited.key, cache: false, fetch: watching });
    const started = Date.now();
    expect(await patient.fetchCampaigns({ placement: 'header_banner' })).toHaveLength(1);
    expect(statuses.at(-1)).toBe(200);
    if (statuses[0] === 429) expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  it('500 and 503 are retried after a delay until the server answers', async () => {
    const proxy = await faultyProxy(placard.url, (index) =>
      index === 0 ? ['fail-before', 500] : index === 1 ? ['fail-before', 503] : ['forward'],
    );
    try {
      const sdk = client({ baseUrl: proxy.url });
      expect(await sdk.fetchCampaigns({ placement: 'header_banner' })).toHaveLength(1);
      expect(proxy.seen).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });

  it('an impression whose answer was lost is retried with the same Idempotency-Key and counted once', async () => {
    const before = await placard.counts(campaignId);
    const proxy = await faultyProxy(placard.url, (index) => (index === 0 ? ['fail-after'] : ['forward']));
    try {
      await client({ baseUrl: proxy.url }).trackImpression(campaignId, 'header_banner');
      expect(proxy.seen).toHaveLength(2);
      const [first, second] = proxy.seen.map((line) => line.split(' ')[2]);
      expect(first).toBeTruthy();
      expect(second).toBe(first);
    } finally {
      await proxy.close();
    }
    const after = await placard.counts(campaignId);
    expect(after.impressions - before.impressions).toBe(1);
    expect(after.nonBillableImpressions - before.nonBillableImpressions).toBe(1);
  });

  it('with tokens: one billed impression and click per display, a replayed token not billed (D15)', async () => {
    const before = await placard.counts(campaignId);
    const sdk = client({ tokens: true });
    const [campaign] = await sdk.fetchCampaigns({ placement: 'header_banner' });
    expect(typeof campaign?.token).toBe('string');
    const display = sdk.display(campaign, 'header_banner', { userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' });
    await display.impression();
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // a person's click, not a script's
    await display.click();
    // The same token again, by hand: a replay of the answer for another page view.
    await sdk.trackImpression(campaignId, 'header_banner', { token: campaign.token });
    const after = await placard.counts(campaignId);
    expect(after.impressions - before.impressions).toBe(1);
    expect(after.clicks - before.clicks).toBe(1);
    expect(after.nonBillableImpressions - before.nonBillableImpressions).toBe(1);
  });

  it.each(['/placard', '/placard/'])(
    'a base URL with a path (%s) is kept: the whole cycle works behind a proxy publishing Placard there',
    async (path) => {
      const before = await placard.counts(campaignId);
      const proxy = await faultyProxy(placard.url, () => ['forward'], '/placard');
      try {
        const sdk = client({ baseUrl: `${proxy.url}${path}`, cache: false });
        const [campaign] = await sdk.fetchCampaigns({ placement: 'header_banner' });
        expect(campaign?.id).toBe(campaignId);
        // Each case is another person's display, forwarded as such: without end-user fields two
        // clicks of one key on one campaign within half a second are one person's double click (D15).
        const display = sdk.display(campaign, 'header_banner', {
          userIp: `198.18.${path.length}.7`,
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0',
        });
        await display.impression();
        await display.click();
        expect(proxy.seen.map((line) => line.split(/[ ?]/)[1])).toEqual([
          '/placard/api/v1/campaigns/fetch',
          '/placard/api/v1/campaigns/impression',
          '/placard/api/v1/campaigns/click',
        ]);
      } finally {
        await proxy.close();
      }
      const after = await placard.counts(campaignId);
      expect(after.impressions - before.impressions).toBe(1);
      expect(after.clicks - before.clicks).toBe(1);
    },
  );
});
