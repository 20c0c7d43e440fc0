import { describe, expect, it } from 'vitest';
import {
  BURST_SLICE_MS,
  burstFinding,
  chooseBaseline,
  ctrFinding,
  dayStart,
  DEFAULT_FLAG_POLICY,
  dominated,
  evaluateKey,
  FLAG_WINDOW_MS,
  policySuspends,
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
    // 4 s of the current slice, 40. The median of the 14 whole slices before the flood is 100, not
    // pulled down by either part slice.
    for (let i = 0; i <= 30; i++) slices.push([T0 + i * S, i === 0 ? 60 : i === 30 ? 40 : 100]);
    slices[15] = [T0 + 15 * S, 1_500];
    const finding = burstFinding(traffic(slices), { start: T0 + 4_000, end });
    expect(finding?.evidence).toMatchObject({
      kind: 'impression',
      peakEvents: 1_500,
      medianEvents: 100,
      wholeSlices: 14,
      ratio: 15,
    });
  });

  it('does not take the usual slices of a key whose traffic then stops (an outage) for a burst', () => {
    // 10 a second for a slice and a half after its first, then its forwarder stops: a slice of 107,
    // then one with the 5 events sent before the outage. Only slices before a slice tell its usual.
    const slices: Array<[number, number]> = [
      [T0, 40],
      [T0 + S, 107],
      [T0 + 2 * S, 5],
    ];
    expect(burstFinding(traffic(slices), windowEndingAt(T0 + 4 * S))).toBeUndefined();
    // Ten minutes of the same quiet, then a flood: a burst against the slices before it.
    for (let i = 3; i < 10; i++) slices.push([T0 + i * S, 5]);
    slices.push([T0 + 10 * S, 300]);
    expect(burstFinding(traffic(slices), windowEndingAt(T0 + 11 * S))).toMatchObject({
      signal: 'burst',
      measure: 60,
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
  const hb = (impressions: number, clicks: number) => new Map([['header_banner', { impressions, clicks }]]);
  /** Billable traffic of the day by key: [apiKeyId, partnerId, impressions, clicks] on header_banner. */
  const keys = (...rows: Array<[number, number, number, number]>) =>
    new Map(rows.map(([id, partnerId, i, c]) => [id, { partnerId, placements: hb(i, c) }]));
  const honestAt3 = { apiKeyId: 9, partnerId: 9 };

  it("takes the key's own billable window out of all billable traffic when other partners have too little", () => {
    // The judged key 1 and key 2 of the same partner: only key 2's traffic and key 1's outside the window.
    const baseline = chooseBaseline(
      hb(5_000, 400),
      keys([1, 1, 3_500, 35], [2, 1, 500, 5]),
      { apiKeyId: 1, partnerId: 1 },
      hb(3_000, 30),
    );
    expect(baseline).toMatchObject({
      source: 'other traffic',
      placements: hb(1_000, 10),
      rates: new Map([['header_banner', 0.01]]),
      median: false,
      topKey: { apiKeyId: 1, share: 0.5 },
    });
  });

  it('reads a placement’s rate as the median of the other partners’ rates: one partner polling impressions by the hundred thousand moves it one place', () => {
    const traffic = keys([1, 1, 2_000, 20], [2, 2, 2_000, 24], [3, 3, 2_000, 16], [4, 4, 100_000, 0]);
    const baseline = chooseBaseline(hb(1_000, 30), traffic, honestAt3)!;
    expect(baseline).toMatchObject({ source: 'other partners', median: true, partners: 4 });
    expect(baseline.rates.get('header_banner')).toBeCloseTo(0.009, 6);
    expect(baseline.topKey).toEqual({ apiKeyId: 4, share: 0.9434 });
    // An honest key clicked 3% of the time is 3.3× that: no finding. Pooled (0.06%), it was 30×.
    expect(ctrFinding({ placements: hb(1_000, 30) }, baseline)).toBeUndefined();
    // A partner with fewer impressions than minPartnerImpressions has no say.
    const small = chooseBaseline(
      hb(1_000, 30),
      keys([1, 1, 2_000, 20], [2, 2, 2_000, 24], [3, 3, 400, 40], [4, 4, 2_000, 16]),
      honestAt3,
    );
    expect(small?.rates.get('header_banner')).toBeCloseTo(0.01, 6);
  });

  it('never lets the policy suspend on a pooled baseline that one key dominates, and says so', () => {
    // Two other partners only: no median; the polling key is 98% of the baseline.
    const traffic = keys([1, 1, 2_000, 20], [4, 4, 100_000, 0]);
    const baseline = chooseBaseline(hb(1_000, 30), traffic, honestAt3)!;
    expect(baseline).toMatchObject({ median: false, topKey: { apiKeyId: 4, share: 0.9804 } });
    expect(dominated(baseline)).toBe(true);
    const finding = ctrFinding({ placements: hb(1_000, 30) }, baseline)!;
    expect(finding).toMatchObject({ signal: 'ctr', suspendable: false });
    expect(finding.measure).toBeGreaterThanOrEqual(10);
    expect(finding.evidence).toMatchObject({ baselineDominated: true, baselineRate: 'pooled' });
    expect(finding.evidence.summary).toMatch(
      /98\.04% of that baseline is one key's \(4\), so it is not suspended by the policy$/,
    );
    const policy = { ...DEFAULT_FLAG_POLICY, autoSuspend: true };
    expect(policySuspends(policy, finding)).toBe(false);
    expect(policySuspends(policy, { ...finding, suspendable: undefined })).toBe(true);
  });
});

describe("a key's day (D15, key flags)", () => {
  const onePercent: Baseline = {
    source: 'other partners',
    placements: new Map([['header_banner', { impressions: 100_000, clicks: 1_000 }]]),
    rates: new Map([['header_banner', 0.01]]),
    median: true,
    partners: 5,
    topKey: { apiKeyId: 2, share: 0.2 },
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
