import { beforeEach, describe, expect, it } from 'vitest';
import {
  ADDRESS_RATE,
  CLICK_WINDOW_MS,
  DOUBLE_CLICK_WINDOW_MS,
  REASONS,
  UNSIGNED_DOUBLE_CLICK_WINDOW_MS,
} from '../src/domain/verdicts.js';
import { campaign, createTestApp, expectTracked, failingEventStore, storedVerdicts } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';
import { expectImpressionRefused } from './helpers/refusals.js';

const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

describe.each(ENGINES)('verdicts and reasons on %s (D15)', (engine) => {
  const t = eachTestFrozenApp(engine, '2026-11-22T10:00:00Z');
  let id: number;
  let other: number;
  beforeEach(async () => {
    [id, other] = await t.addCampaigns([
      campaign({ placements: ['header_banner', 'sidebar_top'] }),
      campaign(),
    ]);
  });

  /**
   * Tracks an event and checks the answer is the contract's 200 whatever the verdict. A click moves
   * the clock past the double-click window, so the next click is never the second of a double click.
   */
  async function send(kind: 'impression' | 'click', fields: Record<string, unknown> = {}, key?: string) {
    const res = await t.track(
      kind,
      { campaignId: id, placement: 'header_banner', ...fields },
      key === undefined ? {} : { 'idempotency-key': key },
    );
    expectTracked(res, kind);
    if (kind === 'click') t.now += DOUBLE_CLICK_WINDOW_MS;
  }

  const stored = () => storedVerdicts(t.store);

  it('bills a click only when it consumes an unclicked impression of its key, campaign and placement', async () => {
    await send('click');
    await send('impression');
    await send('click');
    await send('click'); // a double click: the impression was clicked already
    await send('impression', { campaignId: other });
    await send('click', { placement: 'sidebar_top' }); // another placement's impression
    await send('impression');
    t.now += CLICK_WINDOW_MS + 1; // out of the window
    await send('click');
    expect(await stored()).toEqual([
      'click:invalid:click without impression',
      'impression:counted:',
      'click:counted:',
      'click:invalid:click without impression',
      'impression:counted:',
      'click:invalid:click without impression',
      'impression:counted:',
      'click:invalid:click without impression',
    ]);
  });

  it('does not bill the second click of a double click, though another display waits to be clicked', async () => {
    const alice = { userAgent: BROWSER, userIp: '198.51.100.7' };
    const bob = { userAgent: BROWSER, userIp: '198.51.100.8' };
    for (let i = 0; i < 5; i++) await send('impression');
    // Without end-user signals: two clicks 100 ms apart are one person's double click.
    const click = (fields: Record<string, unknown> = {}) =>
      t.track('click', { campaignId: id, placement: 'header_banner', ...fields });
    await click();
    t.now += 100;
    await click();
    t.now += UNSIGNED_DOUBLE_CLICK_WINDOW_MS; // further apart: two people
    await click();
    t.now += DOUBLE_CLICK_WINDOW_MS;
    // With them: the same person's second click is not billed within the longer window, another's is.
    await click(alice);
    t.now += 1_500;
    await click(alice);
    await click(bob);
    expect(await stored()).toEqual([
      ...Array<string>(5).fill('impression:counted:'),
      'click:counted:',
      'click:invalid:double click',
      'click:counted:',
      'click:counted:',
      'click:invalid:double click',
      'click:counted:',
    ]);
  });

  it('gives back the impression a replayed click consumed, and makes none of a replayed impression', async () => {
    await send('impression', {}, 'shown-1');
    await send('impression', {}, 'shown-1'); // a replay: not a second display
    await send('impression');
    await send('click', {}, 'click-1');
    await send('click', {}, 'click-1'); // a replay: stored as a duplicate, consumes nothing
    await send('click');
    await send('click');
    expect(await stored()).toEqual([
      'impression:counted:',
      'impression:duplicate:idempotent replay',
      'impression:counted:',
      'click:counted:',
      'click:duplicate:idempotent replay',
      'click:counted:',
      'click:invalid:click without impression',
    ]);
  });

  it('gives back the impression a click consumed when the click is refused (422), so the next click is billed', async () => {
    await send('impression', {}, 'same-key');
    // The key's first request was an impression: a click under it is refused and not stored.
    const refused = await t.track(
      'click',
      { campaignId: id, placement: 'header_banner' },
      { 'idempotency-key': 'same-key' },
    );
    expect(refused.statusCode, refused.body).toBe(422);
    await send('click');
    expect(await stored()).toEqual(['impression:counted:', 'click:counted:']);
  });

  it('does not bill a known bot, bills a browser, and never stores the user agent', async () => {
    await send('impression', { userAgent: GOOGLEBOT });
    await send('click', { userAgent: GOOGLEBOT }); // a bot's impression is nothing to click
    await send('impression', { userAgent: BROWSER });
    await send('click', { userAgent: BROWSER });
    await send('impression', { userAgent: 'curl/8.5.0' });
    expect(await stored()).toEqual([
      'impression:invalid:known bot',
      'click:invalid:known bot',
      'impression:counted:',
      'click:counted:',
      'impression:invalid:known bot',
    ]);
    const text = JSON.stringify(await t.store.db.selectFrom('events').selectAll().execute());
    expect(text).not.toContain('Googlebot');
  });

  it('does not bill an address past its rate, and stores addresses truncated to /24 and /48', async () => {
    for (let i = 0; i < ADDRESS_RATE.burst; i++) await send('impression', { userIp: '203.0.113.77' });
    await send('impression', { userIp: '203.0.113.77' });
    await send('impression', { userIp: '203.0.113.78' }); // another address: its own rate
    await send('impression', { userIp: '2001:db8:abcd:12::1' });
    await send('impression', { userIp: '::ffff:198.51.100.9' });
    t.now += 1000; // a second later the address has one event back
    await send('impression', { userIp: '203.0.113.77' });
    const rows = await t.store.db
      .selectFrom('events')
      .select(['verdict', 'reason', 'user_address'])
      .orderBy('id')
      .execute();
    expect(rows.slice(0, ADDRESS_RATE.burst).every((row) => row.verdict === 'counted')).toBe(true);
    expect(rows.slice(ADDRESS_RATE.burst).map((row) => [row.verdict, row.reason, row.user_address])).toEqual([
      ['invalid', REASONS.addressRate, '203.0.113.0'],
      ['counted', null, '203.0.113.0'],
      ['counted', null, '2001:db8:abcd::'],
      ['counted', null, '198.51.100.0'],
      ['counted', null, '203.0.113.0'],
    ]);
    const [plain] = await t.store.db.selectFrom('events').select('user_address').execute();
    expect(plain?.user_address).toBe('203.0.113.0');
    await send('impression');
    const last = await t.store.db
      .selectFrom('events')
      .select('user_address')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    expect(last?.user_address).toBeNull();
  });

  it('does not let a known bot spend the rate of the address it shares with a person', async () => {
    // A crawler and a person behind the same address (one office, one carrier NAT): the bot's
    // events are refused as a bot before the address is counted, so the person keeps the whole burst.
    const address = '203.0.113.77';
    for (let i = 0; i < 2 * ADDRESS_RATE.burst; i++) {
      await send('impression', { userIp: address, userAgent: GOOGLEBOT });
    }
    for (let i = 0; i < ADDRESS_RATE.burst; i++) {
      await send('impression', { userIp: address, userAgent: BROWSER });
    }
    await send('impression', { userIp: address, userAgent: BROWSER });
    const rows = await stored();
    expect(rows.slice(2 * ADDRESS_RATE.burst), 'the person’s events').toEqual([
      ...Array<string>(ADDRESS_RATE.burst).fill('impression:counted:'),
      `impression:invalid:${REASONS.addressRate}`,
    ]);
    expect(rows.slice(0, 2 * ADDRESS_RATE.burst)).toEqual(
      Array<string>(2 * ADDRESS_RATE.burst).fill('impression:invalid:known bot'),
    );
  });

  it.each([
    [{ userAgent: 5 }, 'userAgent must be a string of 1 to 1024 characters'],
    [{ userAgent: '' }, 'userAgent must be a string of 1 to 1024 characters'],
    [{ userAgent: 'x'.repeat(1025) }, 'userAgent must be a string of 1 to 1024 characters'],
    [{ userIp: 'nope' }, 'userIp must be an IPv4 or IPv6 address'],
    [{ userIp: 3405803853 }, 'userIp must be an IPv4 or IPv6 address'],
    [{ userIp: '1' }, 'userIp must be an IPv4 or IPv6 address'],
    [{ userIp: null }, 'userIp must be an IPv4 or IPv6 address'],
  ])('refuses %j with the contract 400', async (fields, message) => {
    await expectImpressionRefused(t, id, fields, message);
    expect(await stored()).toEqual([]);
  });

  it('counts reasons in the rollups, and reports group and filter by verdict and reason', async () => {
    await send('click');
    await send('impression', {}, 'k');
    await send('impression', {}, 'k');
    await send('click');
    await send('impression', { userAgent: GOOGLEBOT });
    const rollups = await t.store.db
      .selectFrom('event_rollups_live')
      .select(['kind', 'verdict', 'reason', 'count'])
      .orderBy('kind')
      .orderBy('verdict')
      .orderBy('reason')
      .execute();
    expect(rollups.map((row) => `${row.kind}:${row.verdict}:${row.reason}:${Number(row.count)}`)).toEqual([
      'click:counted::1',
      'click:invalid:click without impression:1',
      'impression:counted::1',
      'impression:duplicate:idempotent replay:1',
      'impression:invalid:known bot:1',
    ]);

    const grouped = await t.admin('GET', '/reports?from=2026-11-22&to=2026-11-22&groupBy=verdict,reason');
    expect(grouped.statusCode, grouped.body).toBe(200);
    const rows = (grouped.json() as { data: { rows: Record<string, unknown>[] } }).data.rows;
    expect(
      rows.map(({ verdict, reason, impressions, clicks, nonBillableImpressions, nonBillableClicks }) => ({
        verdict,
        reason,
        counts: [impressions, clicks, nonBillableImpressions, nonBillableClicks],
      })),
    ).toEqual([
      { verdict: 'counted', reason: null, counts: [1, 1, 0, 0] },
      { verdict: 'duplicate', reason: 'idempotent replay', counts: [0, 0, 1, 0] },
      { verdict: 'invalid', reason: 'click without impression', counts: [0, 0, 0, 1] },
      { verdict: 'invalid', reason: 'known bot', counts: [0, 0, 1, 0] },
    ]);

    const filtered = await t.admin(
      'GET',
      `/reports?from=2026-11-22&to=2026-11-22&reason=${encodeURIComponent('known bot')},none&verdict=invalid,counted&format=csv`,
    );
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(filtered.body).toBe(
      'period,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency\r\n' +
        '2026-11-22,1,1,1,1,0,0,0,0.00,0.00,0.00,0.00,0.00,USD\r\n',
    );

    const bad = await t.admin('GET', '/reports?reason=robot');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('must be a list of: idempotent replay, click without impression');
    expect((await t.admin('GET', '/reports?verdict=billed')).statusCode).toBe(400);
  });
});

describe.each(ENGINES)('a click the store failed to record, on %s (D15)', (engine) => {
  it('is judged again on retry as the first attempt was: the impression it consumed is given back', async () => {
    const store = failingEventStore();
    const t = await createTestApp({ engine, events: store.events });
    try {
      const [id] = await t.addCampaigns([campaign()]);
      const event = { campaignId: id, placement: 'header_banner' };
      expect((await t.track('impression', event)).statusCode).toBe(200);
      store.failing = true;
      const failed = await t.track('click', event, { 'idempotency-key': 'click-1' });
      expect(failed.statusCode, failed.body).toBe(503);
      store.failing = false;
      const retried = await t.track('click', event, { 'idempotency-key': 'click-1' });
      expect(retried.statusCode, retried.body).toBe(200);
      expect(await storedVerdicts(t.store)).toEqual(['impression:counted:', 'click:counted:']);
    } finally {
      await t.close();
    }
  });
});
