import { Writable } from 'node:stream';
import { pino } from 'pino';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PERIOD_MS } from '../src/domain/frequency-caps.js';
import { HOLD_MS } from '../src/limits/viewer-frequency.js';
import { campaign, createTestApp, expectTracked, storedVerdicts, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';

const PAST = 'impression:invalid:past frequency cap';
const COUNTED = 'impression:counted:';

describe.each(ENGINES)('frequency caps on %s (D20)', (engine) => {
  const t = eachTestFrozenApp(engine, '2026-11-28T10:00:00Z');
  let capped: number;
  let free: number;
  beforeEach(async () => {
    [capped, free] = await t.addCampaigns([
      campaign({ title: 'Capped', frequencyCaps: [{ impressions: 2, per: 'hour' }] }),
      campaign({ title: 'Free' }),
    ]);
  });

  const impression = async (fields: Record<string, unknown>, headers: Record<string, string> = {}) =>
    expectTracked(
      await t.track('impression', { campaignId: capped, placement: 'header_banner', ...fields }, headers),
      'impression',
    );
  const stored = () => storedVerdicts(t.store);
  const fetchedIds = async (query: string) =>
    ((await t.fetch(`placement=header_banner${query}`)).json() as { data: { id: number }[] }).data.map(
      (c) => c.id,
    );

  it('keeps the caps on the campaign through the management API, and refuses bad ones naming the field', async () => {
    const read = (await t.admin('GET', `/campaigns/${capped}`)).json().data;
    expect(read.frequencyCaps).toEqual([{ impressions: 2, per: 'hour' }]);
    const patched = await t.admin('PATCH', `/campaigns/${capped}`, {
      frequencyCaps: [
        { impressions: 10, per: 'week' },
        { impressions: 3, per: 'day' },
      ],
    });
    expect(patched.statusCode).toBe(200);
    // Shortest period first, however they were sent.
    expect(patched.json().data.frequencyCaps).toEqual([
      { impressions: 3, per: 'day' },
      { impressions: 10, per: 'week' },
    ]);
    for (const [caps, field] of [
      [[{ impressions: 3, per: 'month' }], 'frequencyCaps[0].per'],
      [[{ impressions: 0, per: 'day' }], 'frequencyCaps[0].impressions'],
      [[{ impressions: 1001, per: 'day' }], 'frequencyCaps[0].impressions'],
      [
        [
          { impressions: 1, per: 'day' },
          { impressions: 2, per: 'day' },
        ],
        'frequencyCaps[1].per',
      ],
    ] as const) {
      const refused = await t.admin('PATCH', `/campaigns/${capped}`, { frequencyCaps: caps });
      expect(refused.statusCode, JSON.stringify(caps)).toBe(422);
      expect(refused.body).toContain(field);
    }
    // The explainer cannot know the viewer: it says what the caps do, and only for a capped campaign.
    const why = (await t.admin('GET', `/campaigns/${capped}/why?placement=header_banner`)).json().data;
    expect(why.eligible).toBe(true);
    expect(why.notes).toEqual([
      'Frequency caps: 3 per day, 10 per week per viewer. A fetch that names a viewer who has reached one leaves it out; fetches and impressions without a viewer are not capped.',
    ]);
    const cleared = await t.admin('PATCH', `/campaigns/${capped}`, { frequencyCaps: null });
    expect(cleared.json().data.frequencyCaps).toEqual([]);
    expect((await t.admin('GET', `/campaigns/${capped}/why`)).json().data.notes).toEqual([]);
  });

  it('bills a viewer’s impressions up to the cap, then stores them past it, answered 200, and counts again once the hour has passed', async () => {
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'bob' });
    // Without a viewer no frequency cap applies.
    await impression({});
    await impression({});
    await impression({});
    // Another campaign, without caps, for the same viewer.
    await impression({ viewer: 'alice', campaignId: free });
    t.now += PERIOD_MS.hour + 1;
    await impression({ viewer: 'alice' });
    expect(await stored()).toEqual([
      COUNTED,
      COUNTED,
      PAST,
      COUNTED,
      COUNTED,
      COUNTED,
      COUNTED,
      COUNTED,
      COUNTED,
    ]);
  });

  it('leaves out of a viewer’s fetch the campaigns it has reached, and only for that viewer', async () => {
    expect(await fetchedIds('&viewer=alice')).toContain(capped);
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'alice' });
    expect(await fetchedIds('&viewer=alice')).toEqual([free]);
    expect(await fetchedIds('&viewer=bob')).toContain(capped);
    expect(await fetchedIds('')).toContain(capped);
    const answer = await t.fetch('placement=header_banner&viewer=alice');
    expect(answer.headers['cache-control']).toBe('private, no-store');
    t.now += PERIOD_MS.hour + 1;
    expect(await fetchedIds('&viewer=alice')).toContain(capped);
  });

  it('holds a fetch’s answer for its viewer, so a second tab is not given what the first will show', async () => {
    const [once] = await t.addCampaigns([
      campaign({
        title: 'Once an hour',
        placements: ['sidebar_top'],
        frequencyCaps: [{ impressions: 1, per: 'hour' }],
      }),
    ]);
    const sidebar = async (viewer: string) =>
      (
        (await t.fetch(`placement=sidebar_top&viewer=${viewer}`)).json() as { data: { id: number }[] }
      ).data.map((c) => c.id);
    expect(await sidebar('alice')).toEqual([once]);
    expect(await sidebar('alice')).toEqual([]); // the second tab, at the same moment
    expect(await sidebar('bob')).toEqual([once]);
    // Alice's impression takes the held answer's place: billed, and the hour's cap reached.
    expectTracked(
      await t.track('impression', { campaignId: once, placement: 'sidebar_top', viewer: 'alice' }),
      'impression',
    );
    t.now += HOLD_MS + 1;
    expect(await sidebar('alice')).toEqual([]);
    // Bob's answer was never displayed: it stops counting after HOLD_MS.
    expect(await sidebar('bob')).toEqual([once]);
    t.now += PERIOD_MS.hour;
    expect(await sidebar('alice')).toEqual([once]);
    expect((await stored()).filter((verdict) => verdict !== COUNTED)).toEqual([]);
  });

  it('counts an idempotent replay once, so a partner retrying does not use up its viewer’s cap', async () => {
    await impression({ viewer: 'alice' }, { 'idempotency-key': 'display-1' });
    await impression({ viewer: 'alice' }, { 'idempotency-key': 'display-1' });
    await impression({ viewer: 'alice' }, { 'idempotency-key': 'display-2' });
    await impression({ viewer: 'alice' }, { 'idempotency-key': 'display-3' });
    expect(await stored()).toEqual([COUNTED, 'impression:duplicate:idempotent replay', COUNTED, PAST]);
  });

  it('does not spend a viewer’s cap on an impression that is not billed for another reason', async () => {
    const bot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    await impression({ viewer: 'alice', userAgent: bot });
    await impression({ viewer: 'alice', userAgent: bot });
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'alice' });
    expect(await stored()).toEqual([
      'impression:invalid:known bot',
      'impression:invalid:known bot',
      COUNTED,
      COUNTED,
    ]);
  });

  it('never joins two partners’ viewers: the same value from another partner is another viewer', async () => {
    await impression({ viewer: 'alice' });
    await impression({ viewer: 'alice' });
    const other = await t.partners.createPartner('Other partner');
    const { plaintext } = await t.partners.createKey(other.id);
    await t.services.state.refresh();
    const answer = await t.request({
      method: 'POST',
      url: '/api/v1/campaigns/impression',
      headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ campaignId: capped, placement: 'header_banner', viewer: 'alice' }),
    });
    expect(answer.statusCode).toBe(200);
    expect(await stored()).toEqual([COUNTED, COUNTED, COUNTED]);
  });

  it('reports the share of billable impressions that named a viewer, before and after compaction, late events too', async () => {
    const totals = async () => {
      const res = await t.admin('GET', `/reports?from=2026-11-28&to=2026-11-28&campaign=${free}`);
      const { impressionsWithViewer, viewerShare, impressions } = res.json().data.totals;
      return { impressions, impressionsWithViewer, viewerShare };
    };
    const shown = (fields: Record<string, unknown>, headers: Record<string, string> = {}) =>
      impression({ campaignId: free, ...fields }, headers);
    await shown({ viewer: 'alice' }, { 'idempotency-key': 'a-1' });
    await shown({ viewer: 'alice' }, { 'idempotency-key': 'a-1' }); // a replay: not billable
    await shown({ viewer: 'bob' });
    await shown({ viewer: 'carol', userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    await shown({});
    expectTracked(
      await t.track('click', { campaignId: free, placement: 'header_banner', viewer: 'alice' }),
      'click',
    );
    expect(await totals()).toEqual({ impressions: 3, impressionsWithViewer: 2, viewerShare: 0.666667 });
    // Summed into the quarter-hour table: the same figures.
    t.now += 60 * 60 * 1000;
    expect(await t.services.compaction.runOnce()).toBeGreaterThan(0);
    expect(await totals()).toEqual({ impressions: 3, impressionsWithViewer: 2, viewerShare: 0.666667 });
    // An event of a quarter hour already summed (a late commit) is added to both tables.
    t.now -= 60 * 60 * 1000;
    await shown({ viewer: 'dave' });
    expect(await totals()).toEqual({ impressions: 4, impressionsWithViewer: 3, viewerShare: 0.75 });
  });

  it('refuses a viewer that is empty or longer than 128 characters, on fetch and on events', async () => {
    for (const viewer of ['', 'v'.repeat(129)]) {
      const fetched = await t.fetch(`placement=header_banner&viewer=${viewer}`);
      expect(fetched.statusCode).toBe(400);
      expect(fetched.json().message).toBe('viewer must be a string of 1 to 128 characters');
      const tracked = await t.track('impression', { campaignId: capped, placement: 'header_banner', viewer });
      expect(tracked.statusCode).toBe(400);
    }
    const number = await t.track('impression', { campaignId: capped, placement: 'header_banner', viewer: 7 });
    expect(number.statusCode).toBe(400);
    expect(await stored()).toEqual([]);
    expect(
      (
        await t.track('impression', {
          campaignId: capped,
          placement: 'header_banner',
          viewer: 'v'.repeat(128),
        })
      ).statusCode,
    ).toBe(200);
  });
});

describe('the viewer value sent is kept nowhere (D20)', () => {
  const VIEWER = 'viewer-7Q2ZK9-jane@example.com';
  const lines: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    t = await createTestApp({ logger: pino({ level: 'trace' }, sink), accessLog: true });
  });
  afterAll(() => t.close());

  it('appears in no log line, store row or metric after fetches, impressions, clicks and refusals', async () => {
    const [id] = await t.addCampaigns([campaign({ frequencyCaps: [{ impressions: 1, per: 'day' }] })]);
    const body = { campaignId: id, placement: 'header_banner', viewer: VIEWER };
    expect((await t.fetch(`placement=header_banner&viewer=${encodeURIComponent(VIEWER)}`)).statusCode).toBe(
      200,
    );
    expectTracked(await t.track('impression', body), 'impression');
    expectTracked(await t.track('impression', body), 'impression'); // past the cap
    expectTracked(await t.track('click', body), 'click');
    // Refused requests too: an unknown placement, and a viewer too long (its start is the value).
    await t.track('impression', { ...body, placement: 'nowhere' });
    await t.fetch(`placement=nowhere&viewer=${encodeURIComponent(VIEWER)}`);
    await t.track('impression', { ...body, viewer: VIEWER.repeat(5) });
    expect(await storedVerdicts(t.store)).toEqual(['impression:counted:', PAST, 'click:counted:']);

    const metrics = (
      await t.request({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${t.adminToken}` },
      })
    ).body;
    const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(
      t.store.db,
    );
    const rows: string[] = [];
    for (const { name } of tables.rows) {
      const all = await sql`select * from ${sql.table(name)}`.execute(t.store.db);
      rows.push(JSON.stringify(all.rows));
    }
    expect(tables.rows.length).toBeGreaterThan(20);
    expect(lines.join('').length).toBeGreaterThan(0);
    for (const [where, text] of [
      ['log', lines.join('')],
      ['metrics', metrics],
      ['store', rows.join('\n')],
    ] as const) {
      expect(text.includes(VIEWER), where).toBe(false);
      expect(text.includes(encodeURIComponent(VIEWER)), where).toBe(false);
      expect(text.includes('7Q2ZK9'), where).toBe(false);
    }
  });
});
