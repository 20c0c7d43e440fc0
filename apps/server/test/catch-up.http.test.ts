import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REASONS } from '../src/domain/verdicts.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const START = Date.parse('2026-11-22T10:00:00Z');
const OUTAGE_MS = 180_000;

/**
 * A partner whose event forwarder stopped for 3 minutes and then sent its backlog in order, within
 * a second (D15): with `occurredAt` every event is judged when it happened, so its users' clicks
 * are billed and its traffic is not a burst; without, it is judged as it arrives.
 */
describe.each(ENGINES)('a partner catching up after an outage on %s', (engine) => {
  let t: TestApp;
  let now: number;
  let id: number;
  beforeEach(async () => {
    now = START;
    t = await createTestApp({ engine, clock: () => now });
    [id] = await t.addCampaigns([campaign()]);
  });
  afterEach(() => t.close());

  const iso = (ms: number) => new Date(ms).toISOString();

  async function track(kind: 'impression' | 'click', fields: Record<string, unknown>): Promise<void> {
    const res = await t.track(kind, { campaignId: id, placement: 'header_banner', ...fields });
    expect(res.statusCode, res.body).toBe(200);
  }

  /**
   * A minute of live traffic (an impression a second), then 3 minutes in which the forwarder kept
   * the partner's events: an impression a second, 20 of them by users who clicked 3 to 7 seconds
   * later, with serve tokens fetched while they browsed. Then the backlog, in order, 2 ms apart.
   */
  async function outageAndBacklog(withEventTimes: boolean): Promise<void> {
    for (let s = 0; s < 60; s++, now += 1_000) await track('impression', {});
    const backlog: { kind: 'impression' | 'click'; at: number; fields: Record<string, unknown> }[] = [];
    const outageStart = now;
    for (let s = 0; s < OUTAGE_MS / 1_000; s++) {
      now = outageStart + s * 1_000;
      if (s % 9 === 0 && s / 9 < 20) {
        const user = { userAgent: BROWSER, userIp: `198.51.100.${s / 9 + 1}` };
        const token = (await t.fetch('placement=header_banner&tokens=true')).json().data[0].token as string;
        backlog.push({ kind: 'impression', at: now, fields: { ...user, token } });
        backlog.push({ kind: 'click', at: now + 3_000 + (s % 5) * 1_000, fields: { ...user, token } });
      } else backlog.push({ kind: 'impression', at: now, fields: {} });
    }
    backlog.sort((a, b) => a.at - b.at);
    now = outageStart + OUTAGE_MS;
    for (const event of backlog) {
      await track(event.kind, { ...event.fields, ...(withEventTimes && { occurredAt: iso(event.at) }) });
      now += 2;
    }
  }

  const clicks = async () =>
    (
      await t.store.db
        .selectFrom('events')
        .select(['verdict', 'reason'])
        .where('kind', '=', 'click')
        .orderBy('id')
        .execute()
    ).map((row) => row.reason ?? row.verdict);
  const signals = async () => {
    await t.services.flags.runOnce();
    return ((await t.admin('GET', '/flags?limit=200')).json().data as { signal: string }[]).map(
      (f) => f.signal,
    );
  };

  const times = () =>
    t.store.db.selectFrom('events').select(['occurred_at', 'event_at']).orderBy('id').execute();

  it('bills every click of a backlog sent with occurredAt and does not flag it as a burst', async () => {
    await outageAndBacklog(true);
    expect(await clicks()).toEqual(Array(20).fill('counted'));
    expect(await signals()).toEqual([]);
    // Stored with both times: the receipt (what reports count) and the partner's.
    const backlog = (await times()).slice(60).map((row) => [Number(row.occurred_at), Number(row.event_at)]);
    expect(backlog).toHaveLength(200);
    expect(backlog[0]).toEqual([START + 60_000 + OUTAGE_MS, START + 60_000]);
    for (const [received, happened] of backlog) expect(received - happened).toBeGreaterThan(0);
  });

  it('without occurredAt judges the backlog as it arrives: clicks too fast, and a burst', async () => {
    await outageAndBacklog(false);
    expect(await clicks()).toEqual(Array(20).fill(REASONS.clickTooFast));
    expect(await signals()).toContain('burst');
    expect((await times()).every((row) => row.event_at === null)).toBe(true);
  });

  it('refuses an occurredAt that is malformed, in the future beyond the skew, or past the window', async () => {
    const cases: [unknown, string][] = [
      ['2026-11-22T10:00:00', 'occurredAt must be a UTC time, e.g. 2026-01-31T12:00:00Z'],
      ['2026-02-30T10:00:00Z', 'occurredAt must be a UTC time, e.g. 2026-01-31T12:00:00Z'],
      [START, 'occurredAt must be a UTC time, e.g. 2026-01-31T12:00:00Z'],
      [iso(START + 5_001), 'occurredAt must not be more than 5 seconds in the future'],
      [iso(START - 15 * 60_000 - 1), 'occurredAt must not be more than 15 minutes old'],
    ];
    for (const [occurredAt, message] of cases) {
      for (const kind of ['impression', 'click'] as const) {
        const res = await t.track(kind, { campaignId: id, placement: 'header_banner', occurredAt });
        expect(res.statusCode, String(occurredAt)).toBe(400);
        expect(res.json()).toEqual({ status: 'error', message });
      }
    }
    // Within the bounds: accepted (a clock a little fast reads as now).
    await track('impression', { occurredAt: iso(START + 5_000) });
    await track('impression', { occurredAt: iso(START - 15 * 60_000) });
    expect(await t.store.db.selectFrom('events').select('id').execute()).toHaveLength(2);
  });
});
