import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/domain/errors.js';
import { campaign, createTestApp, type TestApp, type TestResponse } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

/**
 * Every management error body carries the stable `code` a client branches on (ERROR_CODES), the
 * specific one where a client must tell cases of one status apart; the partner API's bodies stay
 * the contract's, without one (partner API section 7).
 */
describe.each(ENGINES)('management error codes on %s', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    // The limit on failed authentications reads this clock: frozen, its buckets never refill.
    t = await createTestApp({ engine, monotonic: () => 0 });
  });
  afterEach(() => t.close());

  const send = (method: string, path: string, headers: Record<string, string>, payload?: string) =>
    t.request({ method, url: `/admin/v1${path}`, headers, ...(payload !== undefined && { payload }) });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('names each failure by its code, the specific one where one status covers several cases', async () => {
    const reporter = (
      await t.services.tokens.create({ label: 'reads only', account: 'operator', role: 'reporter' })
    ).plaintext;
    const [draft, submitted] = await t.addCampaigns([
      campaign({ title: 'Spring', status: 'draft' }),
      campaign({ title: 'Summer', status: 'pending_review' }),
    ]);
    const { key } = await t.partners.createKey('Test Partner');
    await t.admin('POST', `/keys/${key.id}/revoke`);

    const cases: Array<[string, () => Promise<TestResponse>, number, string]> = [
      ['no token', () => send('GET', '/partners', {}), 401, 'unauthorized'],
      [
        'an unknown token',
        () => send('GET', '/partners', bearer(`pla_${'x'.repeat(40)}`)),
        401,
        'unauthorized',
      ],
      ['a partner API key', () => send('GET', '/partners', bearer(t.apiKey)), 401, 'wrong_credential'],
      [
        'a reporter changing',
        () => t.admin('POST', '/advertisers', { name: 'A' }, reporter),
        403,
        'forbidden',
      ],
      ['no such campaign', () => t.admin('GET', '/campaigns/999999'), 404, 'not_found'],
      ['no such route', () => t.admin('GET', '/nowhere'), 404, 'not_found'],
      ['a limit out of range', () => t.admin('GET', '/partners?limit=0'), 400, 'invalid_request'],
      ['an unknown query parameter', () => t.admin('GET', '/partners?color=red'), 400, 'unknown_field'],
      [
        'an unknown body field',
        () => t.admin('POST', '/advertisers', { name: 'B', color: 'red' }),
        422,
        'unknown_field',
      ],
      [
        'a campaign without title',
        () => t.admin('POST', '/campaigns', { advertiserId: 1 }),
        422,
        'unprocessable',
      ],
      [
        'a partner’s name taken',
        () => t.admin('POST', '/partners', { name: 'Test Partner' }),
        409,
        'already_exists',
      ],
      ['a key revoked again', () => t.admin('POST', `/keys/${key.id}/revoke`), 409, 'already_done'],
      ['approving a draft', () => t.admin('POST', `/campaigns/${draft}/approve`), 409, 'conflict'],
      ['submitting again', () => t.admin('POST', `/campaigns/${submitted}/submit`), 409, 'already_done'],
      [
        'a body that is not JSON',
        () =>
          send(
            'POST',
            '/advertisers',
            { ...bearer(t.adminToken), 'content-type': 'application/xml' },
            '<a/>',
          ),
        415,
        'unsupported_media_type',
      ],
      [
        'a body over the limit',
        () =>
          send(
            'POST',
            '/advertisers',
            { ...bearer(t.adminToken), 'content-type': 'application/json' },
            `{"name":"${'x'.repeat(1_100_000)}"}`,
          ),
        413,
        'body_too_large',
      ],
    ];
    const seen: Array<[number, string]> = [];
    for (const [, answer] of cases) {
      const response = await answer();
      seen.push([response.statusCode, response.json().code]);
    }
    expect(seen).toEqual(cases.map(([, , status, code]) => [status, code]));
  });

  it('answers a repeated failed authentication past its limit 429 rate_limited', async () => {
    let answer: TestResponse | undefined;
    // The frozen limit allows a burst of 20 failures; the next is refused before authentication.
    for (let attempt = 0; attempt < 25 && answer?.statusCode !== 429; attempt++)
      answer = await send('GET', '/partners', bearer(`pla_${'y'.repeat(40)}`));
    expect(answer?.statusCode).toBe(429);
    expect(answer?.json()).toMatchObject({ status: 'error', code: 'rate_limited' });
  });

  it('keeps the partner API’s bodies the contract’s, without a code', async () => {
    const refused = await t.fetch('placement=header_banner', `plc_${'z'.repeat(40)}`);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ status: 'error', message: 'unauthorized' });
  });
});

it('every code says when it is given, here and in the management guide', () => {
  const guide = fs.readFileSync(new URL('../../../docs/management.md', import.meta.url), 'utf8');
  for (const [code, meaning] of Object.entries(ERROR_CODES)) {
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(meaning.length, code).toBeGreaterThan(20);
    expect(guide, code).toMatch(new RegExp('^\\| \\d{3} +\\| `' + code + '` ', 'm'));
  }
});
