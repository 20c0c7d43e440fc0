import { describe, expect, it } from 'vitest';
import { RecentTraffic } from './recent-traffic.js';

const HOUR = 3_600_000;
const H = Date.parse('2026-06-01T08:00:00Z');

describe('RecentTraffic: the day (D15, key flags)', () => {
  const impression = (apiKeyId: number, reason = '') => ({
    apiKeyId,
    partnerId: 7,
    placement: 'header_banner',
    kind: 'impression' as const,
    reason,
  });

  it("sums each key's events over the hours that overlap the last day, and forgets an hour wholly before it", () => {
    const traffic = new RecentTraffic();
    for (let i = 0; i < 3; i++) traffic.record(impression(1), H + i * 1_000);
    traffic.record(impression(1, 'known bot'), H + 5_000);
    for (let i = 0; i < 2; i++) traffic.record(impression(1), H + HOUR + i * 1_000);
    traffic.record(impression(2), H + HOUR);
    const counts = (now: number) =>
      traffic
        .dayCounts(now)
        .map(({ apiKeyId, reason, count }) => [apiKeyId, reason, count])
        .sort();

    // 24 h 59 min after H, the hour from H still overlaps the last 24 hours.
    expect(counts(H + 25 * HOUR - 60_000)).toEqual([
      [1, '', 5],
      [1, 'known bot', 1],
      [2, '', 1],
    ]);
    // 25 h after, it no longer does: its events leave the day, and a count that reaches 0 goes.
    expect(counts(H + 25 * HOUR)).toEqual([
      [1, '', 2],
      [2, '', 1],
    ]);
    expect(counts(H + 26 * HOUR)).toEqual([]);
  });

  it('never counts the second click of a double click: no evidence in the window, its slices or the day', () => {
    const traffic = new RecentTraffic();
    const click = (reason: string) => ({ ...impression(1, reason), kind: 'click' as const });
    traffic.record(impression(1), H);
    traffic.record(click(''), H + 2_000);
    for (let i = 0; i < 30; i++) traffic.record(click('double click'), H + 2_100 + i);
    const evidence = (rows: readonly { kind: string; reason: string; count: number }[]) =>
      rows.map(({ kind, reason, count }) => [kind, reason, count]).sort();
    const counted = [
      ['click', '', 1],
      ['impression', '', 1],
    ];
    expect(evidence(traffic.keyEventCounts(H, H + 10_000))).toEqual(counted);
    expect(evidence(traffic.dayCounts(H + 10_000))).toEqual(counted);
    expect(traffic.keySliceCounts(H, H + 10_000).find((slice) => slice.kind === 'click')?.count).toBe(1);
  });

  it('counts the events whose end user’s address was forwarded by that address, for the window only', () => {
    const traffic = new RecentTraffic();
    traffic.record(impression(1), H, '203.0.113.0');
    traffic.record({ ...impression(2), kind: 'click' }, H + 1_000, '203.0.113.0');
    traffic.record(impression(1), H + 2_000, '2001:db8:1::');
    traffic.record(impression(1), H + 3_000);
    const rows = (from: number, to: number) =>
      traffic
        .addressEventCounts(from, to)
        .map(({ address, apiKeyId, kind, count }) => [address, apiKeyId, kind, count])
        .sort();
    expect(rows(H, H + 10_000)).toEqual([
      ['2001:db8:1::', 1, 'impression', 1],
      ['203.0.113.0', 1, 'impression', 1],
      ['203.0.113.0', 2, 'click', 1],
    ]);
    // Once the window and two slices more are over, its slices are forgotten.
    traffic.record(impression(1), H + 5 * 60_000 + 30_000);
    expect(rows(H, H + 10_000)).toEqual([]);
  });
});
