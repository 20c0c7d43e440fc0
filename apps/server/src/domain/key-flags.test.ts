import { describe, expect, it } from 'vitest';
import {
  BURST_SLICE_MS,
  burstFinding,
  chooseBaseline,
  dayStart,
  evaluateKey,
  FLAG_WINDOW_MS,
  type Baseline,
  type KeyTraffic,
} from './key-flags.js';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const S = BURST_SLICE_MS;

/** A key's traffic with these impressions per slice (slice start → count). */
function traffic(impressions: Array<[number, number]>, clicks: Array<[number, number]> = []): KeyTraffic {
  return {
    apiKeyId: 1,
    partnerId: 1,
    placements: new Map(),
    billable: new Map(),
    clickReasons: new Map(),
    slices: { impression: new Map(impressions), click: new Map(clicks) },
  };
}

const windowEndingAt = (end: number) => ({ start: end - FLAG_WINDOW_MS, end });

describe('bursts (D15, key flags)', () => {
  it('does not take a key that just started sending, steadily, for a burst of its own full slices', () => {
    // 100 a second from 0.5 s before a slice ended: 50, then a full slice of 1,000, then the pass a
    // moment into the next (5 so far). Each partial slice against the full one is 20× and 200×.
    const start = T0 + 9_500;
    expect(burstFinding(traffic([[T0, 50]]), windowEndingAt(start + 500))).toBeUndefined();
    expect(
      burstFinding(
        traffic([
          [T0, 50],
          [T0 + S, 1_000],
          [T0 + 2 * S, 5],
        ]),
        windowEndingAt(T0 + 2 * S + 50),
      ),
    ).toBeUndefined();
    // Later, with whole slices to tell its usual rate, still steady: no burst either.
    const steady: Array<[number, number]> = [[T0, 50]];
    for (let i = 1; i <= 10; i++) steady.push([T0 + i * S, 1_000]);
    steady.push([T0 + 11 * S, 3]);
    expect(burstFinding(traffic(steady), windowEndingAt(T0 + 11 * S + 30))).toBeUndefined();
  });

  it('leaves out the slice the window starts in part of, and the one under way', () => {
    const end = T0 + 30 * S + 4_000;
    const slices: Array<[number, number]> = [];
    // The window begins 4 s into a slice: 6 s of it, 60 events; then 29 whole slices of 100; then
    // 4 s of the current slice, 40. The median of whole slices is 100, not pulled down by either.
    for (let i = 0; i <= 30; i++) slices.push([T0 + i * S, i === 0 ? 60 : i === 30 ? 40 : 100]);
    slices[15] = [T0 + 15 * S, 1_500];
    const finding = burstFinding(traffic(slices), { start: T0 + 4_000, end });
    expect(finding?.evidence).toMatchObject({
      kind: 'impression',
      peakEvents: 1_500,
      medianEvents: 100,
      wholeSlices: 29,
      ratio: 15,
    });
  });

  it('still flags a flood in the slice under way on a key that was sending before', () => {
    const slices: Array<[number, number]> = [];
    for (let i = 0; i < 12; i++) slices.push([T0 + i * S, 10]);
    slices.push([T0 + 12 * S, 300]);
    const finding = burstFinding(traffic(slices), windowEndingAt(T0 + 12 * S + 6_000));
    expect(finding).toMatchObject({ signal: 'burst', measure: 30, threshold: 10 });
    expect(finding?.evidence).toMatchObject({ peakEvents: 300, medianEvents: 10, wholeSlices: 11 });
  });

  it('needs two whole slices before it judges a burst', () => {
    // First slice (partial), one whole slice, then a flood under way: one whole slice is not a usual rate.
    const slices: Array<[number, number]> = [
      [T0, 3],
      [T0 + S, 10],
      [T0 + 2 * S, 500],
    ];
    expect(burstFinding(traffic(slices), windowEndingAt(T0 + 2 * S + 5_000))).toBeUndefined();
    slices.splice(2, 0, [T0 + 2 * S, 10]);
    slices[3] = [T0 + 3 * S, 500];
    expect(burstFinding(traffic(slices), windowEndingAt(T0 + 3 * S + 5_000))?.evidence).toMatchObject({
      medianEvents: 10,
      wholeSlices: 2,
    });
  });
});

describe('the click-through baseline (D15, key flags)', () => {
  it("takes the key's own billable window out of all billable traffic when other partners have too little", () => {
    const own = new Map([['header_banner', { impressions: 5_000, clicks: 400 }]]);
    const ownBillable = new Map([['header_banner', { impressions: 3_000, clicks: 30 }]]);
    const all = new Map([['header_banner', { impressions: 4_000, clicks: 40 }]]);
    const baseline = chooseBaseline(own, all, all, ownBillable);
    expect(baseline).toEqual({
      source: 'other traffic',
      placements: new Map([['header_banner', { impressions: 1_000, clicks: 10 }]]),
    });
  });
});

describe("a key's day (D15, key flags)", () => {
  const onePercent: Baseline = {
    source: 'other partners',
    placements: new Map([['header_banner', { impressions: 100_000, clicks: 1_000 }]]),
  };
  const withPlacements = (impressions: number, clicks: number): KeyTraffic => ({
    ...traffic([]),
    placements: new Map([['header_banner', { impressions, clicks }]]),
  });
  const window = { ...windowEndingAt(T0), baselineStart: dayStart(T0) };

  it('starts at the first whole hour that overlaps the last 24 hours', () => {
    expect(new Date(dayStart(Date.parse('2026-06-01T12:34:56Z'))).toISOString()).toBe(
      '2026-05-31T12:00:00.000Z',
    );
    expect(new Date(dayStart(T0)).toISOString()).toBe('2026-05-31T12:00:00.000Z');
  });

  it('judges the click-through rate of its day when its window is too small, and says so', () => {
    // The window: 300 impressions predict 3 clicks (under 50); the day: 6,000 predict 60.
    const findings = evaluateKey(withPlacements(300, 0), onePercent, window, {
      placements: new Map([['header_banner', { impressions: 6_000, clicks: 0 }]]),
      baseline: onePercent,
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ signal: 'ctr', measure: 60, threshold: 5 });
    expect(findings[0]?.evidence).toMatchObject({
      span: 'day',
      direction: 'below',
      windowStart: '2026-05-31T12:00:00.000Z',
      windowEnd: '2026-06-01T12:00:00.000Z',
      summary:
        "click-through rate 0% is 60× below its placements' baseline of 1%: 6000 impressions, 0 clicks where 60 were expected, over its traffic since 2026-05-31 12:00 UTC",
    });
  });

  it('leaves the day alone when the window already shows the click-through rate', () => {
    const day = {
      placements: new Map([['header_banner', { impressions: 90_000, clicks: 0 }]]),
      baseline: onePercent,
    };
    const findings = evaluateKey(withPlacements(6_000, 0), onePercent, window, day);
    expect(findings.map((finding) => [finding.signal, finding.evidence['span']])).toEqual([
      ['ctr', 'window'],
    ]);
    expect(findings[0]?.evidence).toMatchObject({
      impressions: 6_000,
      windowStart: new Date(T0 - FLAG_WINDOW_MS).toISOString(),
    });
  });
});
