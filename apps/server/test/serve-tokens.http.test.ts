import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { MIN_CLICK_DELAY_MS, SERVE_TOKEN_TTL_MS, ServeTokens } from '../src/domain/serve-tokens.js';
import { CLICK_WINDOW_MS, DOUBLE_CLICK_WINDOW_MS } from '../src/domain/verdicts.js';
import { serveTokenSecret } from '../src/serving/serve-token-secret.js';
import { campaign, createTestApp, expectTracked, failingEventStore, storedVerdicts } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';
import { expectContract400, expectImpressionRefused } from './helpers/refusals.js';
import { otherSpellings } from './helpers/token-spellings.js';

/** The contract's campaign fields (partner API 2.1), in the order Placard writes them. */
const CONTRACT_FIELDS = ['id', 'title', 'description', 'category', 'destinationUrl', 'status', 'createdAt'];

interface Served {
  id: number;
  token: string;
}

describe.each(ENGINES)('serve tokens on %s (D15)', (engine) => {
  const t = eachTestFrozenApp(engine, '2026-11-22T10:00:00Z');
  let id: number;
  let other: number;
  beforeEach(async () => {
    // Two priorities, so the order of the answer is fixed and two fetches can be compared byte for byte.
    [id, other] = await t.addCampaigns([
      campaign({
        placements: ['header_banner', 'sidebar_top'],
        priority: 2,
        description: 'Described',
        category: 'technology',
      }),
      campaign({ priority: 1 }),
    ]);
  });

  /** Fetches with tokens and returns each campaign's token by campaign id. */
  async function tokens(placement = 'header_banner', key?: string): Promise<Map<number, string>> {
    const res = await t.fetch(`placement=${placement}&tokens=true`, key);
    expect(res.statusCode, res.body).toBe(200);
    return new Map((res.json().data as Served[]).map((served) => [served.id, served.token]));
  }

  /** Tracks an event and checks the answer is the contract's 200 whatever the verdict. */
  async function send(
    kind: 'impression' | 'click',
    fields: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    const res = await t.track(kind, { campaignId: id, placement: 'header_banner', ...fields }, headers);
    expectTracked(res, kind);
  }

  /**
   * One page view: a fetch with tokens, then impressions and clicks of the campaigns it served (A
   * unless another is named), each carrying its campaign's token.
   */
  async function pageView() {
    const served = await tokens();
    const withToken = (campaignId: number) => ({ campaignId, token: served.get(campaignId) });
    return {
      show: (campaignId = id, headers?: Record<string, string>) =>
        send('impression', withToken(campaignId), headers),
      click: (campaignId = id, headers?: Record<string, string>) =>
        send('click', withToken(campaignId), headers),
    };
  }

  const stored = async () =>
    (
      await t.store.db
        .selectFrom('events')
        .select(['kind', 'campaign_id', 'verdict', 'reason'])
        .orderBy('id')
        .execute()
    ).map(
      (row) => `${row.kind}:${Number(row.campaign_id) === id ? 'A' : 'B'}:${row.verdict}:${row.reason ?? ''}`,
    );

  it('leaves the default answer byte for byte the contract’s, and adds a token per campaign only when asked', async () => {
    const plain = await t.fetch('placement=header_banner');
    const spelledOut = await t.fetch('placement=header_banner&tokens=false');
    const tokened = await t.fetch('placement=header_banner&tokens=true');
    for (const res of [plain, spelledOut, tokened]) expect(res.statusCode, res.body).toBe(200);

    expect(spelledOut.body).toBe(plain.body);
    expect(plain.headers['cache-control']).toBe('private, max-age=5');
    expect(spelledOut.headers['cache-control']).toBe('private, max-age=5');
    const body = plain.json() as { data: Record<string, unknown>[]; count: number };
    expect(Object.keys(plain.json())).toEqual(['status', 'data', 'count']);
    expect(body.count).toBe(2);
    for (const served of body.data) {
      expect(Object.keys(served).every((field) => CONTRACT_FIELDS.includes(field))).toBe(true);
      expect(served).not.toHaveProperty('token');
    }

    // An answer for one page view: never to be reused.
    expect(tokened.headers['cache-control']).toBe('private, no-store');
    const data = tokened.json().data as (Served & Record<string, unknown>)[];
    expect(data.map((served) => served.id)).toEqual([id, other]);
    for (const served of data) expect(served.token).toMatch(/^[A-Za-z0-9_-]{60,120}$/);
    expect(new Set(data.map((served) => served.token)).size).toBe(2);
    // Without its tokens, the tokened answer is the default one, byte for byte.
    const untokened = JSON.stringify({
      ...tokened.json(),
      data: data.map(({ token: _token, ...rest }) => rest),
    });
    expect(untokened).toBe(plain.body);
    // Every fetch hands out new tokens.
    const again = await tokens();
    expect(again.get(id)).not.toBe(data[0]?.token);

    const head = await t.request({
      method: 'HEAD',
      url: '/api/v1/campaigns/fetch?placement=header_banner&tokens=true',
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers['cache-control']).toBe('private, no-store');
  });

  it.each([
    ['tokens=yes', 'tokens must be true or false'],
    ['tokens=', 'tokens must be true or false'],
    ['tokens=TRUE', 'tokens must be true or false'],
    ['tokens=true&tokens=true', 'tokens parameter must be given only once'],
  ])('refuses %s with the contract 400', async (query, message) => {
    expectContract400(await t.fetch(`placement=header_banner&${query}`), message);
  });

  it('bills an honest page view: one impression per token, and a click a person made after it', async () => {
    const page = await pageView();
    await page.show();
    await page.show(other);
    t.now += 2_000;
    await page.click();
    expect(await stored()).toEqual(['impression:A:counted:', 'impression:B:counted:', 'click:A:counted:']);
  });

  it('does not bill a replayed impression, a click without the token’s impression, a second click or a too fast one', async () => {
    const first = await pageView();
    const second = await pageView();
    await first.click(); // before its impression
    await first.show();
    await first.show(); // the answer reused for another page view
    t.now += MIN_CLICK_DELAY_MS;
    await first.click();
    t.now += 300;
    await first.click(); // the second click of a double click
    t.now += DOUBLE_CLICK_WINDOW_MS;
    await first.click(); // a later one: the token is used up
    await second.show();
    t.now += MIN_CLICK_DELAY_MS - 1;
    await second.click(); // faster than a person
    t.now += 5_000;
    await second.click(); // its one click was the fast one
    expect(await stored()).toEqual([
      'click:A:invalid:click without impression',
      'impression:A:counted:',
      'impression:A:invalid:token replay',
      'click:A:counted:',
      'click:A:invalid:double click',
      'click:A:invalid:token replay',
      'impression:A:counted:',
      'click:A:invalid:click too fast',
      'click:A:invalid:token replay',
    ]);
  });

  it('knows a token by its nonce, not its spelling: another spelling of a used token is a replay', async () => {
    const token = (await tokens()).get(id) as string;
    const spellings = otherSpellings(token);
    expect(spellings.length).toBeGreaterThanOrEqual(15);
    await send('impression', { token });
    for (const spelling of spellings) await send('impression', { token: spelling });
    t.now += MIN_CLICK_DELAY_MS;
    const [first, ...rest] = spellings;
    await send('click', { token: first });
    // Past the double-click window, where a second click with the token is its replay.
    t.now += DOUBLE_CLICK_WINDOW_MS;
    for (const spelling of [token, ...rest]) await send('click', { token: spelling });
    expect(await stored()).toEqual([
      'impression:A:counted:',
      ...spellings.map(() => 'impression:A:invalid:token replay'),
      'click:A:counted:',
      ...spellings.map(() => 'click:A:invalid:token replay'),
    ]);
  });

  it('does not bill a forged token, nor one of another key, campaign or placement, nor an expired one', async () => {
    const served = await tokens();
    const token = served.get(id) as string;
    const { plaintext: otherKey } = await t.partners.createKey((await t.partners.createPartner('Other')).id);
    await t.state.refresh();
    const othersToken = (await tokens('header_banner', otherKey)).get(id);
    const sidebarToken = (await tokens('sidebar_top')).get(id);
    // Each byte of the token is covered by its signature; flip a bit of its nonce.
    const bytes = Buffer.from(token, 'base64url');
    bytes[25] = bytes[25] ^ 1;
    await send('impression', { token: bytes.toString('base64url') });
    // Well formed, signed with another secret (another deployment's, or a guess).
    const forger = new ServeTokens(randomBytes(32));
    await send('impression', {
      token: forger.issue(t.apiKeyId, id, 'header_banner', t.now, randomBytes(12)),
    });
    await send('impression', { token: 'not a token at all' });
    await send('impression', { token: othersToken });
    await send('impression', { token: served.get(other) }); // campaign B's token on A's impression
    await send('impression', { token: sidebarToken }); // fetched for the sidebar, shown in the header
    t.now += SERVE_TOKEN_TTL_MS + 1;
    await send('impression', { token });
    expect(await stored()).toEqual([
      'impression:A:invalid:bad token',
      'impression:A:invalid:bad token',
      'impression:A:invalid:bad token',
      'impression:A:invalid:bad token',
      'impression:A:invalid:bad token',
      'impression:A:invalid:bad token',
      'impression:A:invalid:expired token',
    ]);
  });

  it('bills a token’s click for the hour after its impression, then calls it expired', async () => {
    const page = await pageView();
    t.now += SERVE_TOKEN_TTL_MS - 1; // the last moment its impression is billed
    await page.show();
    await page.show(other);
    t.now += CLICK_WINDOW_MS - 1;
    await page.click();
    t.now += 1;
    await page.click(other);
    expect(await stored()).toEqual([
      'impression:A:counted:',
      'impression:B:counted:',
      'click:A:counted:',
      'click:B:invalid:expired token',
    ]);
  });

  it('keeps tokened and untokened displays apart: neither clicks the other’s impression', async () => {
    const page = await pageView();
    await page.show();
    t.now += 2_000;
    await send('click'); // no untokened impression to click
    await send('impression');
    await page.click(other); // B's token had no impression
    t.now += DOUBLE_CLICK_WINDOW_MS; // not a double click of the first
    await send('click'); // the untokened impression is still there to click
    await page.click();
    expect(await stored()).toEqual([
      'impression:A:counted:',
      'click:A:invalid:click without impression',
      'impression:A:counted:',
      'click:B:invalid:click without impression',
      'click:A:counted:',
      'click:A:counted:',
    ]);
  });

  it('stores an idempotent retry as a duplicate, and its token keeps its one impression and one click', async () => {
    const page = await pageView();
    await page.show(id, { 'idempotency-key': 'shown-1' });
    await page.show(id, { 'idempotency-key': 'shown-1' });
    t.now += 2_000;
    await page.click(id, { 'idempotency-key': 'click-1' });
    await page.click(id, { 'idempotency-key': 'click-1' });
    t.now += DOUBLE_CLICK_WINDOW_MS;
    await page.click();
    expect(await stored()).toEqual([
      'impression:A:counted:',
      'impression:A:duplicate:idempotent replay',
      'click:A:counted:',
      'click:A:duplicate:idempotent replay',
      'click:A:invalid:token replay',
    ]);
  });

  it.each([
    [{ token: 5 }, 'token must be a string of 1 to 256 characters'],
    [{ token: '' }, 'token must be a string of 1 to 256 characters'],
    [{ token: null }, 'token must be a string of 1 to 256 characters'],
    [{ token: 'x'.repeat(257) }, 'token must be a string of 1 to 256 characters'],
  ])('refuses %j with the contract 400', async (fields, message) => {
    await expectImpressionRefused(t, id, fields, message);
    expect(await stored()).toEqual([]);
  });

  it('counts the new reasons in reports', async () => {
    const page = await pageView();
    await page.show();
    await page.show();
    const res = await t.admin(
      'GET',
      `/reports?from=2026-11-22&to=2026-11-22&groupBy=reason&reason=${encodeURIComponent('token replay')}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.rows).toMatchObject([
      { reason: 'token replay', impressions: 0, nonBillableImpressions: 1 },
    ]);
  });
});

describe.each(ENGINES)('a tokened event the store failed to record, on %s (D15)', (engine) => {
  it('gives its token back: the retry is judged as the first attempt was', async () => {
    const store = failingEventStore();
    let now = Date.parse('2026-11-22T10:00:00Z');
    const t = await createTestApp({ engine, clock: () => now, events: store.events });
    try {
      const [id] = await t.addCampaigns([campaign()]);
      const res = await t.fetch('placement=header_banner&tokens=true');
      const token = (res.json().data as Served[])[0]?.token;
      const event = { campaignId: id, placement: 'header_banner', token };
      store.failing = true;
      expect((await t.track('impression', event)).statusCode).toBe(503);
      store.failing = false;
      expect((await t.track('impression', event)).statusCode).toBe(200);
      now += 2_000;
      store.failing = true;
      expect((await t.track('click', event, { 'idempotency-key': 'click-1' })).statusCode).toBe(503);
      store.failing = false;
      expect((await t.track('click', event, { 'idempotency-key': 'click-1' })).statusCode).toBe(200);
      expect(await storedVerdicts(t.store)).toEqual(['impression:counted:', 'click:counted:']);
    } finally {
      await t.close();
    }
  });
});

describe.each(ENGINES)('the serve token secret on %s', (engine) => {
  it('is generated once and kept in the store, so every instance and restart agrees; configured, it is used as is', async () => {
    const t = await createTestApp({ engine });
    try {
      // Two instances starting together: the first writer wins, and both read its secret.
      const [first, second] = await Promise.all([
        serveTokenSecret(t.store, undefined),
        serveTokenSecret(t.store, undefined),
      ]);
      expect(first.length).toBe(32);
      expect(second).toEqual(first);
      expect(await serveTokenSecret(t.store, undefined)).toEqual(first);
      const configured = 'a-secret-from-the-operators-secret-store';
      expect(await serveTokenSecret(t.store, configured)).toEqual(Buffer.from(configured));
    } finally {
      await t.close();
    }
  });
});
