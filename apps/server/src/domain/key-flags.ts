// Key flags (D15): the signals that a key's traffic looks fraudulent or broken, their thresholds, and
// the pure evaluation of one key's traffic against them. The job that feeds them is
// services/key-flag-job.ts; docs/product-rules.md (D15, "Key flags") says the same in words.
import { REASONS } from './verdicts.js';

export const FLAG_SIGNALS = ['ctr', 'burst', 'clicks without impressions'] as const;
export type FlagSignal = (typeof FLAG_SIGNALS)[number];

export const FLAG_STATUSES = ['open', 'dismissed', 'suspended'] as const;
export type FlagStatus = (typeof FLAG_STATUSES)[number];

/** The sliding window each key's traffic is judged over: long enough for figures, short enough to act within minutes. */
export const FLAG_WINDOW_MS = 5 * 60_000;
/** How often the job judges every key (D15: a flood is flagged within 2 minutes of starting). */
export const FLAG_INTERVAL_MS = 30_000;
/** What "normal" is for a placement: its traffic of the last 24 hours (counted by the hour, `dayStart`). */
export const BASELINE_WINDOW_MS = 24 * 60 * 60_000;

const HOUR = 60 * 60_000;

/**
 * Where a key's day and the baseline begin: the start of the first whole hour that overlaps the
 * last `BASELINE_WINDOW_MS` (traffic is counted by the hour, so the day holds 24 to 25 hours).
 */
export function dayStart(now: number): number {
  const from = now - BASELINE_WINDOW_MS;
  return from - (from % HOUR);
}

/** Bursts are counted in slices of 10 seconds. */
export const BURST_SLICE_MS = 10_000;
/** A flag dismissed by an operator is not raised again for the same key and signal for a day. */
export const DISMISSAL_QUIET_MS = 24 * 60 * 60_000;

/**
 * The thresholds, each with a minimum volume so that a small honest key is never flagged by chance
 * (the odds are worked out in docs/product-rules.md, D15).
 */
export const FLAG_THRESHOLDS = {
  ctr: {
    /** Clicks at least this many times what the placements' baseline predicts (or at most 1/ratio of it). */
    ratio: 5,
    /** "Far above" needs at least this many clicks in the window. */
    minClicks: 20,
    /** "Far below" needs at least this many clicks predicted by the baseline. */
    minExpectedClicks: 50,
    /** A baseline needs this many impressions on the key's placements, else there is no CTR signal. */
    minBaselineImpressions: 1_000,
    /** A baseline without clicks counts as this CTR (0.1%), so a ratio stays finite. */
    minBaselineCtr: 0.001,
  },
  burst: {
    /** A 10-second slice with this many times the key's median whole slice (of the ones it was active in). */
    ratio: 10,
    /**
     * The median needs at least this many whole slices: ones wholly inside the window and already
     * over, after the key's first slice in the window (which it may have begun sending in at any
     * moment). Fewer, and the key has not sent long enough for a usual rate to compare with.
     */
    minWholeSlices: 2,
    /** ...and at least this many events of the kind in that slice. */
    minEvents: { impression: 100, click: 30 },
  },
  clicksWithoutImpressions: {
    /** At least this share of the key's clicks without a matching impression. */
    share: 0.2,
    /** ...of at least this many clicks in the window. */
    minClicks: 20,
  },
} as const;

/** The click reasons that mean "no impression to go with it": none at all, or a token not from one. */
export const UNPAIRED_CLICK_REASONS: readonly string[] = [
  REASONS.clickWithoutImpression,
  REASONS.badToken,
  REASONS.expiredToken,
  REASONS.tokenReplay,
];

export interface Counts {
  impressions: number;
  clicks: number;
}

/** One key's events in the window (replays left out: they are the same event again). */
export interface KeyTraffic {
  apiKeyId: number;
  partnerId: number;
  /** Impressions and clicks by placement, every verdict but `duplicate`. */
  placements: Map<string, Counts>;
  /** The billable (`counted`) ones among them, by placement: the key's share of the baseline. */
  billable: Map<string, Counts>;
  /** Clicks by reason ('' for counted), every verdict but `duplicate`. */
  clickReasons: Map<string, number>;
  /** Events per 10-second slice (keyed by the slice's start), by kind. */
  slices: { impression: Map<number, number>; click: Map<number, number> };
}

/** A placement's baseline: billable impressions and clicks of other traffic over the baseline window. */
export interface Baseline {
  /** `other partners`: traffic of every other partner; `other traffic`: everything but this key's window. */
  source: 'other partners' | 'other traffic';
  placements: Map<string, Counts>;
}

/** What a signal found: the figures, the window and the thresholds it was held to. */
export interface Finding {
  signal: FlagSignal;
  /** How far past normal, in the unit of the signal's threshold (a ratio, or a share). */
  measure: number;
  /** The threshold `measure` was compared with. */
  threshold: number;
  /** The figures, in words and numbers, for the operator and the partner. */
  evidence: Record<string, unknown> & { summary: string };
}

/** Times in evidence are ISO 8601 text, so the JSON reads the same in the API, the CLI and the dashboard. */
const iso = (ms: number) => new Date(ms).toISOString();
const round = (value: number, digits = 4) => Number(value.toFixed(digits));
const percent = (value: number) => `${round(value * 100, 2)}%`;
const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

/**
 * The baseline of a key's placements: the other partners' traffic when it is enough to tell what
 * normal is; otherwise all traffic but this key's own window (a deployment with one partner, or a
 * partner whose keys are most of a placement's traffic). Undefined when neither has
 * `minBaselineImpressions` on the key's placements: there is then no CTR signal.
 *
 * Billable traffic only: `all` and `ownPartner` count `counted` events, and `ownBillable` is the
 * key's own billable window taken out of `all`. Events the verdicts refused are not normal: a
 * bot's impressions would pull every placement's rate down (honest keys then look clicked far
 * above it) and a flood's clicks without impressions push it up (honest keys then look clicked far
 * below it, and a 20× key hides).
 */
export function chooseBaseline(
  keyPlacements: ReadonlyMap<string, Counts>,
  all: ReadonlyMap<string, Counts>,
  ownPartner: ReadonlyMap<string, Counts>,
  ownBillable: ReadonlyMap<string, Counts> = keyPlacements,
): Baseline | undefined {
  const zero: Counts = { impressions: 0, clicks: 0 };
  const others = new Map<string, Counts>();
  const rest = new Map<string, Counts>();
  for (const placement of keyPlacements.keys()) {
    const total = all.get(placement) ?? zero;
    const partner = ownPartner.get(placement) ?? zero;
    const own = ownBillable.get(placement) ?? zero;
    others.set(placement, {
      impressions: Math.max(0, total.impressions - partner.impressions),
      clicks: Math.max(0, total.clicks - partner.clicks),
    });
    rest.set(placement, {
      impressions: Math.max(0, total.impressions - own.impressions),
      clicks: Math.max(0, total.clicks - own.clicks),
    });
  }
  const enough = (placements: Map<string, Counts>) =>
    sum([...placements.values()].map((c) => c.impressions)) >= FLAG_THRESHOLDS.ctr.minBaselineImpressions;
  if (enough(others)) return { source: 'other partners', placements: others };
  if (enough(rest)) return { source: 'other traffic', placements: rest };
  return undefined;
}

/**
 * Click-through rate against the baseline of the same placements: the clicks the baseline predicts
 * for the key's impressions (placement by placement) against the clicks it has.
 */
export function ctrFinding(
  traffic: Pick<KeyTraffic, 'placements'>,
  baseline: Baseline | undefined,
): Finding | undefined {
  if (!baseline) return undefined;
  const t = FLAG_THRESHOLDS.ctr;
  let impressions = 0;
  let clicks = 0;
  let expected = 0;
  let baselineImpressions = 0;
  let baselineClicks = 0;
  for (const [placement, own] of traffic.placements) {
    const base = baseline.placements.get(placement);
    if (!base || base.impressions === 0) continue;
    impressions += own.impressions;
    clicks += own.clicks;
    baselineImpressions += base.impressions;
    baselineClicks += base.clicks;
    expected += own.impressions * Math.max(base.clicks / base.impressions, t.minBaselineCtr);
  }
  if (impressions === 0 || expected === 0) return undefined;
  const ratio = clicks / expected;
  const above = clicks >= t.minClicks && ratio >= t.ratio;
  const below = expected >= t.minExpectedClicks && ratio <= 1 / t.ratio;
  if (!above && !below) return undefined;
  const baselineCtr = baselineClicks / baselineImpressions;
  const ctr = clicks / impressions;
  const measure = above ? ratio : expected / Math.max(clicks, 1);
  return {
    signal: 'ctr',
    measure: round(measure, 2),
    threshold: t.ratio,
    evidence: {
      summary: above
        ? `click-through rate ${percent(ctr)} is ${round(ratio, 1)}× its placements' baseline of ${percent(baselineCtr)} (${clicks} clicks on ${impressions} impressions)`
        : `click-through rate ${percent(ctr)} is ${round(measure, 1)}× below its placements' baseline of ${percent(baselineCtr)}: ${impressions} impressions, ${clicks} clicks where ${Math.round(expected)} were expected`,
      direction: above ? 'above' : 'below',
      impressions,
      clicks,
      ctr: round(ctr, 6),
      expectedClicks: round(expected, 1),
      ratio: round(ratio, 3),
      baselineCtr: round(baselineCtr, 6),
      baselineImpressions,
      baselineClicks,
      baselineSource: baseline.source,
      placements: [...traffic.placements.keys()].sort(),
      thresholds: { ratio: t.ratio, minClicks: t.minClicks, minExpectedClicks: t.minExpectedClicks },
    },
  };
}

/** The median of some counts (the lower middle one of an even number). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/**
 * The slices that tell a key's usual rate: whole ones. A slice that began before the window, or is
 * still under way at its end, or is the key's first in the window (it may have started sending a
 * moment before the slice ended) holds only part of 10 seconds: counted in, a key that just started
 * would look like a burst of its own full slices against a few events at its start or in the
 * current slice.
 */
function wholeSlices(slices: ReadonlyMap<number, number>, window: { start: number; end: number }): number[] {
  const first = Math.min(...slices.keys());
  return [...slices]
    .filter(([start]) => start !== first && start >= window.start && start + BURST_SLICE_MS <= window.end)
    .map(([, count]) => count);
}

/**
 * Bursts: a 10-second slice with far more events of one kind than the key's median whole slice,
 * counted over the whole slices it sent that kind in (a key that starts sending is not a burst; a
 * polling loop or a click flood on a key that was sending before is). The busiest slice may be any,
 * the current one included: a slice only partly over can only hold fewer events than it will.
 */
export function burstFinding(
  traffic: KeyTraffic,
  window: { start: number; end: number },
): Finding | undefined {
  const t = FLAG_THRESHOLDS.burst;
  let best: Finding | undefined;
  for (const kind of ['impression', 'click'] as const) {
    const slices = traffic.slices[kind];
    if (slices.size === 0) continue;
    const whole = wholeSlices(slices, window);
    if (whole.length < t.minWholeSlices) continue;
    const typical = Math.max(median(whole), 1);
    const [peakStart, peak] = [...slices.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
    const ratio = peak / typical;
    if (peak < t.minEvents[kind] || ratio < t.ratio) continue;
    if (best && best.measure >= ratio) continue;
    best = {
      signal: 'burst',
      measure: round(ratio, 2),
      threshold: t.ratio,
      evidence: {
        summary: `${peak} ${kind}s in the 10 seconds from ${iso(peakStart).slice(11, 19)} UTC, ${round(ratio, 1)}× its usual ${typical} per 10 seconds`,
        kind,
        peakStart: iso(peakStart),
        peakEvents: peak,
        medianEvents: typical,
        activeSlices: slices.size,
        wholeSlices: whole.length,
        sliceSeconds: BURST_SLICE_MS / 1000,
        ratio: round(ratio, 3),
        thresholds: { ratio: t.ratio, minEvents: t.minEvents[kind], minWholeSlices: t.minWholeSlices },
      },
    };
  }
  return best;
}

/** Clicks without impressions: the share of the key's clicks that had no impression to go with them. */
export function unpairedClicksFinding(traffic: KeyTraffic): Finding | undefined {
  const t = FLAG_THRESHOLDS.clicksWithoutImpressions;
  const clicks = sum(traffic.clickReasons.values());
  if (clicks < t.minClicks) return undefined;
  const reasons = Object.fromEntries(
    [...traffic.clickReasons].filter(([reason]) => UNPAIRED_CLICK_REASONS.includes(reason)),
  );
  const unpaired = sum(Object.values(reasons));
  const share = unpaired / clicks;
  if (share < t.share) return undefined;
  return {
    signal: 'clicks without impressions',
    measure: round(share, 4),
    threshold: t.share,
    evidence: {
      summary: `${unpaired} of its ${clicks} clicks (${percent(share)}) had no impression to go with them`,
      clicks,
      unpairedClicks: unpaired,
      share: round(share, 4),
      reasons,
      thresholds: { share: t.share, minClicks: t.minClicks },
    },
  };
}

/**
 * A key's own traffic over the last day (the baseline's, by the hour) and the baseline of its
 * placements over it, without the key's own billable events: its click-through rate over the day
 * is judged when its window shows nothing, so that a key too slow for the window's minimum
 * volumes is judged by the same thresholds once its day reaches them. An impression polling loop
 * of a few requests a second predicts 50 clicks within hours, not within 5 minutes; a key clicked
 * 20 times its placements' rate but seldom reaches 20 clicks the same way.
 */
export interface KeyDay {
  /** Impressions and clicks by placement over the day, every verdict but `duplicate`. */
  placements: Map<string, Counts>;
  baseline: Baseline | undefined;
}

/** `2026-06-01 09:00 UTC`: the start of a day's traffic, in a summary. */
const minuteText = (ms: number) => `${iso(ms).slice(0, 16).replace('T', ' ')} UTC`;

/**
 * Every signal a key's window raises, with the window added to each one's evidence; the
 * click-through rate of the key's day (`KeyDay`) when its window shows none.
 */
export function evaluateKey(
  traffic: KeyTraffic,
  baseline: Baseline | undefined,
  window: { start: number; end: number; baselineStart: number },
  day?: KeyDay,
): Finding[] {
  const windowCtr = ctrFinding(traffic, baseline);
  const dayCtr = windowCtr || !day ? undefined : ctrFinding(day, day.baseline);
  const findings: [Finding | undefined, 'window' | 'day'][] = [
    [windowCtr, 'window'],
    [dayCtr, 'day'],
    [burstFinding(traffic, window), 'window'],
    [unpairedClicksFinding(traffic), 'window'],
  ];
  return findings.flatMap(([finding, span]) => {
    if (!finding) return [];
    const start = span === 'day' ? window.baselineStart : window.start;
    const summary =
      span === 'day'
        ? `${finding.evidence.summary}, over its traffic since ${minuteText(start)}`
        : finding.evidence.summary;
    return [
      {
        ...finding,
        evidence: {
          ...finding.evidence,
          summary,
          ...(finding.signal === 'ctr' && { span }),
          windowStart: iso(start),
          windowEnd: iso(window.end),
          ...(finding.signal === 'ctr' && { baselineStart: iso(window.baselineStart) }),
          measure: finding.measure,
          threshold: finding.threshold,
        },
      },
    ];
  });
}

/** The operator's policy for suspending keys without waiting for a review (off unless turned on). */
export interface FlagPolicy {
  autoSuspend: boolean;
  /** The signals that may suspend a key by themselves. */
  signals: FlagSignal[];
  /** A flag suspends only when its measure is at least this many times its threshold (1 to 100). */
  multiplier: number;
}

export const DEFAULT_FLAG_POLICY: FlagPolicy = {
  autoSuspend: false,
  signals: [...FLAG_SIGNALS],
  multiplier: 2,
};

/** Whether the policy suspends the key of this finding by itself. */
export function policySuspends(
  policy: FlagPolicy,
  finding: Pick<Finding, 'signal' | 'measure' | 'threshold'>,
): boolean {
  if (!policy.autoSuspend || !policy.signals.includes(finding.signal)) return false;
  // A share cannot pass 100%: its threshold times the multiplier is capped there.
  const bar =
    finding.signal === 'clicks without impressions'
      ? Math.min(finding.threshold * policy.multiplier, 1)
      : finding.threshold * policy.multiplier;
  return finding.measure >= bar;
}
