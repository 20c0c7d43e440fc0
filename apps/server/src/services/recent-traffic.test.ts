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
});
