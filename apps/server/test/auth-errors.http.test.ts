import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { generateAdminToken, generateApiKey } from '../src/domain/api-keys.js';
import { createTestApp, eachTestWithCampaign, withWrongLastCharacter, type TestApp } from './helpers/app.js';

let t: TestApp;
let campaignId: number;
eachTestWithCampaign((ready) => ({ app: t, campaignId } = ready));

const UNAUTHORIZED = { status: 'error', message: 'unauthorized' };

/** One request per partner operation, with the given headers. */
function operations(headers: Record<string, string>) {
  const body = JSON.stringify({ campaignId, placement: 'header_banner' });
  const json = { 'content-type': 'application/json', ...headers };
  return [
    () => t.request({ method: 'GET', url: '/api/v1/campaigns/fetch?placement=header_banner', headers }),
    () => t.request({ method: 'POST', url: '/api/v1/campaigns/impression', headers: json, payload: body }),
    () => t.request({ method: 'POST', url: '/api/v1/campaigns/click', headers: json, payload: body }),
  ];
}

describe('authentication (partner API section 5; D6)', () => {
  const wrongCredentials: Array<[string, (key: string) => Record<string, string>]> = [
    ['no Authorization header', () => ({})],
    ['an empty header', () => ({ authorization: '' })],
    ['the Basic scheme', (key) => ({ authorization: `Basic ${key}` })],
    ['a scheme without a key', () => ({ authorization: 'Bearer' })],
    ['the key without a scheme', (key) => ({ authorization: key })],
    ['a malformed key', () => ({ authorization: 'Bearer not-a-key' })],
    ['a key with a wrong checksum', (key) => ({ authorization: `Bearer ${withWrongLastCharacter(key)}` })],
    [
      'a well-formed key that was never issued',
      () => ({ authorization: `Bearer ${generateApiKey().plaintext}` }),
    ],
  ];

  it.each(wrongCredentials)(
    'answers 401 with WWW-Authenticate for %s, on every operation',
    async (_name, headers) => {
      for (const call of operations(headers(t.apiKey))) {
        const res = await call();
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual(UNAUTHORIZED);
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
      expect(await t.store.countEvents()).toBe(0);
    },
  );

  it('answers an admin token with the contract body, saying only in WWW-Authenticate which credential the route takes', async () => {
    // A real admin token and one never issued get the same answer: the shape alone decides.
    for (const token of [t.adminToken, generateAdminToken().plaintext]) {
      for (const call of operations({ authorization: `Bearer ${token}` })) {
        const res = await call();
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe('{"status":"error","message":"unauthorized"}');
        expect(res.headers['www-authenticate']).toBe(
          'Bearer error="invalid_token", error_description="this route takes a partner API key (plc_...), not an admin token"',
        );
      }
    }
    expect(await t.store.countEvents()).toBe(0);
  });

  it('limits repeated failures from one address with 429, never a valid key from it', async () => {
    let now = Date.parse('2026-06-01T12:00:00Z');
    const limited = await createTestApp({ clock: () => now });
    try {
      const bad = { authorization: `Bearer ${generateApiKey().plaintext}` };
      const attempt = () =>
        limited.request({
          method: 'GET',
          url: '/api/v1/campaigns/fetch?placement=header_banner',
          headers: bad,
        });
      for (let i = 0; i < 20; i++) expect((await attempt()).statusCode).toBe(401);
      const refused = await attempt();
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ status: 'error', message: 'Rate limit exceeded' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // The same address with a real key is served as usual.
      expect((await limited.fetch('placement=header_banner')).statusCode).toBe(200);
      now += 1000; // five failures' worth of refill
      for (let i = 0; i < 5; i++) expect((await attempt()).statusCode).toBe(401);
      expect((await attempt()).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('counts failures per client address: one address spending its allowance leaves another unlimited', async () => {
    const limited = await createTestApp({ clock: () => Date.parse('2026-06-01T12:00:00Z') });
    try {
      const bad = { authorization: `Bearer ${generateApiKey().plaintext}` };
      const attemptFrom = async (localAddress: string) =>
        (
          await limited.request({
            method: 'GET',
            url: '/api/v1/campaigns/fetch?placement=header_banner',
            headers: bad,
            localAddress,
          })
        ).statusCode;
      for (let i = 0; i < 20; i++) expect(await attemptFrom('127.0.0.2')).toBe(401);
      expect(await attemptFrom('127.0.0.2')).toBe(429);
      expect(await attemptFrom('127.0.0.1')).toBe(401);
      expect(await attemptFrom('127.0.0.2')).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('accepts the scheme word in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      for (const call of operations({ authorization: `${scheme} ${t.apiKey}` }))
        expect((await call()).statusCode).toBe(200);
    }
  });

  it('never accepts a key in the query string', async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/campaigns/fetch?placement=header_banner&api_key=${t.apiKey}&key=${t.apiKey}`,
    });
    expect(res.statusCode).toBe(401);
  });

  it('checks authentication before validating the request', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/campaigns/fetch' });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a revoked key with 401 once the change is seen', async () => {
    await t.partners.revokeKey(t.apiKeyId);
    await t.state.refresh();
    for (const call of operations({ authorization: `Bearer ${t.apiKey}` })) {
      const res = await call();
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
  });

  it('answers 403 "api key suspended" for a suspended key, also when suspended directly in the store', async () => {
    await sql`update api_keys set status = 'suspended' where id = ${t.apiKeyId}`.execute(t.store.db);
    await t.state.refresh();
    for (const call of operations({ authorization: `Bearer ${t.apiKey}` })) {
      const res = await call();
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ status: 'error', message: 'api key suspended' });
    }
  });

  it('serves a key created after start once the change is seen', async () => {
    const partner = await t.partners.createPartner('Second');
    const { plaintext } = await t.partners.createKey(partner.id);
    expect((await t.fetch('placement=header_banner', plaintext)).statusCode).toBe(401);
    await t.state.refresh();
    expect((await t.fetch('placement=header_banner', plaintext)).statusCode).toBe(200);
  });
});

describe('errors (partner API section 7; D8)', () => {
  it('answers 404 "not found" for an unknown route', async () => {
    for (const url of [
      '/nothing-here', // `/` is the dashboard's
      '/api/v1/campaigns',
      '/api/v2/campaigns/fetch',
      '/api/v1/campaigns/fetch/extra',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ status: 'error', message: 'not found' });
    }
  });

  it.each([
    ['POST', '/api/v1/campaigns/fetch', 'GET, HEAD'],
    ['DELETE', '/api/v1/campaigns/fetch', 'GET, HEAD'],
    ['GET', '/api/v1/campaigns/impression', 'POST'],
    ['PUT', '/api/v1/campaigns/click', 'POST'],
  ] as const)('answers 405 "method not allowed" for %s %s', async (method, url, allow) => {
    const res = await t.request({ method, url, headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.statusCode).toBe(405);
    expect(res.headers['allow']).toBe(allow);
    expect(res.json()).toEqual({ status: 'error', message: 'method not allowed' });
  });

  it('answers 500 "internal server error" for an unexpected fault, with no detail in the body', async () => {
    Object.defineProperty(t.state, 'index', {
      get() {
        throw new TypeError('cannot read secret internals at /srv/placard/index.ts:42');
      },
    });
    const res = await t.fetch('placement=header_banner');
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('{"status":"error","message":"internal server error"}');
  });

  it('puts X-Request-Id on every response, echoing a well-formed client id and replacing a bad one', async () => {
    const responses = [
      await t.fetch('placement=header_banner'),
      await t.fetch(''),
      await t.request({ method: 'GET', url: '/nowhere' }),
      await t.request({ method: 'POST', url: '/api/v1/campaigns/fetch' }),
      await t.request({ method: 'GET', url: '/api/v1/campaigns/fetch' }),
    ];
    for (const res of responses) expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(new Set(responses.map((r) => r.headers['x-request-id'])).size).toBe(responses.length);

    const echoed = await t.request({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const replaced = await t.request({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': 'bad id<script>' },
    });
    expect(replaced.headers['x-request-id']).not.toContain('<');
  });
});
