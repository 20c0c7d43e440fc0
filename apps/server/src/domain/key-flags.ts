// Key flags (D15): the signals that a key's traffic looks fraudulent or broken, their thresholds, and
// the pure evaluation of one key's traffic against them. The job that feeds them is
// jobs/key-flag-job.ts; docs/product-rules.md (D15, "Key flags") says the same in words.
import { REASONS } from './verdicts.js';

/** The signals of one key's traffic: the automatic policy may suspend on these. */
export const KEY_SIGNALS = ['ctr', 'burst', 'clicks without impressions'] as const;
export type KeySignal = (typeof KEY_SIGNALS)[number];
/**
 * Every signal: the key signals, `partner ctr`, the click-through rate of a partner's keys together
 * (fraud spread over keys so that none alone reaches the key threshold), and `shared addresses`,
 * end-user addresses clicking far above the baseline through several keys and partners
 * (`shared-addresses.ts`). A partner flag is stored on one of its keys (the one with the most
 * clicks) and names the keys it is about in its evidence.
 */
export const FLAG_SIGNALS = [...KEY_SIGNALS, 'partner ctr', 'shared addresses'] as const;
export type FlagSignal = (typeof FLAG_SIGNALS)[number];
/** The signals whose flag names a partner's keys (`evidence.keys`), not only the key it is stored on. */
export const PARTNER_SIGNALS: readonly FlagSignal[] = ['partner ctr', 'shared addresses'];

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
    /** A placement's rate is the median of the other partners' rates when this many have... */
    minPartners: 3,
    /** ...at least this many billable impressions there each (about 5 clicks at 1%); else the pooled rate. */
    minPartnerImpressions: 500,
    /** A pooled baseline with one key past this share of its impressions never suspends by the policy. */
    maxTopKeyShare: 0.5,
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
  partnerCtr: {
    /**
     * A partner's keys together, clicked at least this many times what the baseline predicts: lower
     * than a key's 5×, for the volume of several keys makes a smaller excess as sure.
     */
    ratio: 3,
    /** ...with at least this many clicks in the window, together... */
    minClicks: 50,
    /** ...from at least this many keys that were clicked (one key is judged by the key signals). */
    minKeys: 2,
  },
  sharedAddresses: {
    /**
     * An end-user address (as stored: its IPv4 /24, IPv6 /48) whose clicks, through every key,
     * are at least this many times what the baseline predicts for its impressions...
     */
    ratio: 3,
    /** ...with at least this many clicks in the window... */
    minClicks: 50,
    /** ...through at least this many keys (one key's addresses are that key's traffic). */
    minKeys: 2,
    /**
     * A partner is named when its own traffic from the flagged addresses is clicked at least this
     * many times the baseline too: an honest partner whose users share such an address, clicking
     * as people do, is not.
     */
    partnerRatio: 3,
    /** ...with at least this many clicks from them. */
    minPartnerClicks: 5,
    /** The evidence lists at most this many addresses (the most clicked). */
    maxListed: 20,
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

/**
 * Events that are never evidence against a key, counted nowhere by the flags: the second click of a
 * double click is what a person does by habit; counted as a click without an impression, or in the
 * key's click-through rate or its bursts, it would flag an honest key whose users double-click.
 */
export const NOT_EVIDENCE_REASONS: readonly string[] = [REASONS.doubleClick];

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

/**
 * A placement's baseline: the rate the key's clicks are predicted by, read from the billable
 * traffic of keys that are not flagged or suspended (`BaselineTraffic`).
 */
export interface Baseline {
  /** `other partners`: traffic of every other partner; `other traffic`: everything but this key's window. */
  source: 'other partners' | 'other traffic';
  /** The pooled billable impressions and clicks the baseline was read from, by placement. */
  placements: Map<string, Counts>;
  /**
   * The click-through rate each placement predicts: the median of the other partners' own rates
   * there when at least `minPartners` of them have `minPartnerImpressions` each, else the pooled rate.
   */
  rates: Map<string, number>;
  /** Whether every placement's rate is such a median (no one partner can move it far). */
  median: boolean;
  /** How many partners' traffic it was read from. */
  partners: number;
  /** The key with the most impressions in the pooled figures, and its share of them. */
  topKey: { apiKeyId: number; share: number } | undefined;
}

/** The billable traffic of one key over the baseline's hours, by placement. */
export interface BaselineKey {
  partnerId: number;
  placements: Map<string, Counts>;
}

/**
 * What a baseline is read from: the billable traffic of the day by key, without the keys that are
 * flagged (an open flag, or one that suspended them in the day) or suspended. Their traffic is
 * what a flag is about, not what is normal: a polling loop's impressions left in, after it was
 * flagged for them, would pull its placements' rate down until honest keys look clicked far above it.
 */
export type BaselineTraffic = ReadonlyMap<number, BaselineKey>;

/** What a signal found: the figures, the window and the thresholds it was held to. */
export interface Finding {
  signal: FlagSignal;
  /** How far past normal, in the unit of the signal's threshold (a ratio, or a share). */
  measure: number;
  /** The threshold `measure` was compared with. */
  threshold: number;
  /** The figures, in words and numbers, for the operator and the partner. */
  evidence: Record<string, unknown> & { summary: string };
  /** False where the policy must never suspend on it (a baseline one key dominates): flagged for review only. */
  suspendable?: boolean;
}

/** Times in evidence are ISO 8601 text, so the JSON reads the same in the API, the CLI and the dashboard. */
const iso = (ms: number) => new Date(ms).toISOString();
const round = (value: number, digits = 4) => Number(value.toFixed(digits));
const percent = (value: number) => `${round(value * 100, 2)}%`;
const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

/** The median of some counts (the lower middle one of an even number). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/** The median of some rates (the mean of the two middle ones of an even number: neither side's). */
function medianRate(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const high = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[high]! : (sorted[high - 1]! + sorted[high]!) / 2;
}

const rateOf = (counts: Counts) => (counts.impressions === 0 ? 0 : counts.clicks / counts.impressions);

function addCounts(map: Map<string, Counts>, placement: string, counts: Counts): void {
  const total = map.get(placement) ?? { impressions: 0, clicks: 0 };
  total.impressions += counts.impressions;
  total.clicks += counts.clicks;
  map.set(placement, total);
}

/**
 * The baseline of a key's placements: the other partners' traffic when it is enough to tell what
 * normal is; otherwise all traffic but this key's own billable events of what is judged
 * (`ownBillable`: its window, or its day), for a deployment with one partner, or a partner whose keys
 * are most of a placement's traffic. Undefined when neither has `minBaselineImpressions` on the
 * key's placements: there is then no CTR signal.
 *
 * Billable traffic only, of keys neither flagged nor suspended (`BaselineTraffic`). Events the
 * verdicts refused are not normal: a bot's impressions would pull every placement's rate down
 * (honest keys then look clicked far above it) and a flood's clicks without impressions push it up.
 *
 * Over other partners, a placement's rate is the median of the partners' own rates when enough of
 * them have enough traffic there: a pooled rate is as much one big partner's as it is the
 * placement's, so a key polling impressions by the thousand (or clicked by the hundred) before it
 * is flagged would move it at will; a median moves one place for one partner, however big.
 */
export function chooseBaseline(
  keyPlacements: ReadonlyMap<string, Counts>,
  traffic: BaselineTraffic,
  judged: { apiKeyId: number; partnerId: number },
  ownBillable: ReadonlyMap<string, Counts> = keyPlacements,
): Baseline | undefined {
  const t = FLAG_THRESHOLDS.ctr;
  const others = new Map<string, Counts>();
  const rest = new Map<string, Counts>();
  const byPartner = new Map<number, Map<string, Counts>>();
  const byKeyOthers = new Map<number, number>();
  const byKeyRest = new Map<number, number>();
  for (const placement of keyPlacements.keys()) {
    others.set(placement, { impressions: 0, clicks: 0 });
    rest.set(placement, { impressions: 0, clicks: 0 });
  }
  for (const [apiKeyId, key] of traffic) {
    for (const [placement, counts] of key.placements) {
      if (!keyPlacements.has(placement)) continue;
      let own = counts;
      if (apiKeyId === judged.apiKeyId) {
        const judgedOwn = ownBillable.get(placement) ?? { impressions: 0, clicks: 0 };
        own = {
          impressions: Math.max(0, counts.impressions - judgedOwn.impressions),
          clicks: Math.max(0, counts.clicks - judgedOwn.clicks),
        };
      }
      addCounts(rest, placement, own);
      byKeyRest.set(apiKeyId, (byKeyRest.get(apiKeyId) ?? 0) + own.impressions);
      if (key.partnerId === judged.partnerId) continue;
      addCounts(others, placement, counts);
      byKeyOthers.set(apiKeyId, (byKeyOthers.get(apiKeyId) ?? 0) + counts.impressions);
      const partner = byPartner.get(key.partnerId) ?? new Map<string, Counts>();
      addCounts(partner, placement, counts);
      byPartner.set(key.partnerId, partner);
    }
  }
  const impressionsOf = (placements: Map<string, Counts>) =>
    sum([...placements.values()].map((c) => c.impressions));
  const topKey = (byKey: Map<number, number>, total: number) => {
    const [apiKeyId, impressions] = [...byKey].reduce((a, b) => (b[1] > a[1] ? b : a), [0, 0]);
    return total === 0 || impressions === 0 ? undefined : { apiKeyId, share: round(impressions / total, 4) };
  };

  const otherImpressions = impressionsOf(others);
  if (otherImpressions >= t.minBaselineImpressions) {
    const rates = new Map<string, number>();
    let allMedians = true;
    for (const [placement, pooled] of others) {
      const partnerRates = [...byPartner.values()]
        .map((partner) => partner.get(placement))
        .filter((counts): counts is Counts => (counts?.impressions ?? 0) >= t.minPartnerImpressions)
        .map(rateOf);
      if (partnerRates.length >= t.minPartners) rates.set(placement, medianRate(partnerRates));
      else {
        if (pooled.impressions > 0) allMedians = false;
        rates.set(placement, rateOf(pooled));
      }
    }
    return {
      source: 'other partners',
      placements: others,
      rates,
      median: allMedians,
      partners: byPartner.size,
      topKey: topKey(byKeyOthers, otherImpressions),
    };
  }
  const restImpressions = impressionsOf(rest);
  if (restImpressions >= t.minBaselineImpressions) {
    const partners = new Set([...traffic.values()].map((key) => key.partnerId));
    return {
      source: 'other traffic',
      placements: rest,
      rates: new Map([...rest].map(([placement, counts]) => [placement, rateOf(counts)])),
      median: false,
      partners: partners.size,
      topKey: topKey(byKeyRest, restImpressions),
    };
  }
  return undefined;
}

/**
 * Whether one key is most of a baseline that no median protects: the baseline then tells that
 * key's rate, not its placements', and a finding against it is a question for an operator, never a
 * reason to suspend by the policy (a key polling impressions would otherwise get an honest key
 * suspended before it is itself flagged).
 */
export function dominated(baseline: Baseline): boolean {
  return !baseline.median && (baseline.topKey?.share ?? 0) > FLAG_THRESHOLDS.ctr.maxTopKeyShare;
}

/**
 * Click-through rate against the baseline of the same placements: the clicks the baseline predicts
 * for the key's impressions (placement by placement) against the clicks it has.
 */
/** A key's (or keys') impressions and clicks on the baseline's placements, and the clicks it predicts. */
function ctrFigures(traffic: Pick<KeyTraffic, 'placements'>, baseline: Baseline) {
  let impressions = 0;
  let clicks = 0;
  let expected = 0;
  let baselineImpressions = 0;
  let baselineClicks = 0;
  for (const [placement, own] of traffic.placements) {
    const base = baseline.placements.get(placement);
    const rate = baseline.rates.get(placement);
    if (!base || base.impressions === 0 || rate === undefined) continue;
    impressions += own.impressions;
    clicks += own.clicks;
    baselineImpressions += base.impressions;
    baselineClicks += base.clicks;
    expected += own.impressions * Math.max(rate, FLAG_THRESHOLDS.ctr.minBaselineCtr);
  }
  if (impressions === 0 || expected === 0) return undefined;
  return { impressions, clicks, expected, baselineImpressions, baselineClicks };
}

export function ctrFinding(
  traffic: Pick<KeyTraffic, 'placements'>,
  baseline: Baseline | undefined,
  t: { ratio: number; minClicks: number; minExpectedClicks: number } = FLAG_THRESHOLDS.ctr,
): Finding | undefined {
  const figures = baseline && ctrFigures(traffic, baseline);
  if (!baseline || !figures) return undefined;
  const { impressions, clicks, expected, baselineImpressions, baselineClicks } = figures;
  const ratio = clicks / expected;
  const above = clicks >= t.minClicks && ratio >= t.ratio;
  const below = expected >= t.minExpectedClicks && ratio <= 1 / t.ratio;
  if (!above && !below) return undefined;
  // The rate the key was held to: its placements' rates, weighted by its own impressions on each.
  const baselineCtr = expected / impressions;
  const ctr = clicks / impressions;
  const measure = above ? ratio : expected / Math.max(clicks, 1);
  const isDominated = dominated(baseline);
  return {
    signal: 'ctr',
    measure: round(measure, 2),
    threshold: t.ratio,
    ...(isDominated && { suspendable: false }),
    evidence: {
      summary:
        (above
          ? `click-through rate ${percent(ctr)} is ${round(ratio, 1)}× its placements' baseline of ${percent(baselineCtr)} (${clicks} clicks on ${impressions} impressions)`
          : `click-through rate ${percent(ctr)} is ${round(measure, 1)}× below its placements' baseline of ${percent(baselineCtr)}: ${impressions} impressions, ${clicks} clicks where ${Math.round(expected)} were expected`) +
        (isDominated
          ? `; ${percent(baseline.topKey!.share)} of that baseline is one key's (${baseline.topKey!.apiKeyId}), so it is not suspended by the policy`
          : ''),
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
      baselineRate: baseline.median ? 'median of partners' : 'pooled',
      baselinePartners: baseline.partners,
      ...(baseline.topKey && { baselineTopKey: baseline.topKey }),
      baselineDominated: isDominated,
      placements: [...traffic.placements.keys()].sort(),
      thresholds: {
        ratio: t.ratio,
        minClicks: t.minClicks,
        minExpectedClicks: t.minExpectedClicks,
        minPartners: FLAG_THRESHOLDS.ctr.minPartners,
        minPartnerImpressions: FLAG_THRESHOLDS.ctr.minPartnerImpressions,
        maxTopKeyShare: FLAG_THRESHOLDS.ctr.maxTopKeyShare,
      },
    },
  };
}

/**
 * The slices that tell a key's usual rate: whole ones. A slice that began before the window, or is
 * still under way at its end, or is the key's first in the window (it may have started sending a
 * moment before the slice ended) holds only part of 10 seconds: counted in, a key that just started
 * would look like a burst of its own full slices against a few events at its start or in the
 * current slice.
 */
function wholeSlices(
  slices: ReadonlyMap<number, number>,
  window: { start: number; end: number },
): Array<[number, number]> {
  const first = Math.min(...slices.keys());
  return [...slices].filter(
    ([start]) => start !== first && start >= window.start && start + BURST_SLICE_MS <= window.end,
  );
}

/**
 * Bursts: a 10-second slice with far more events of one kind than the key's median whole slice
 * before it, counted over the whole slices it sent that kind in (a key that starts sending is not a
 * burst; a polling loop or a click flood on a key that was sending before is). Only the slices
 * before a slice tell what was usual for it: a key whose traffic stops (its forwarder's outage, its
 * site's quiet night) leaves slices with a few events after its usual ones, and those must not make
 * its usual ones look like a burst. Any slice may be the burst, the current one included: a slice
 * only partly over can only hold fewer events than it will.
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
    for (const [peakStart, peak] of slices) {
      if (peak < t.minEvents[kind]) continue;
      const before = whole.filter(([start]) => start < peakStart).map(([, count]) => count);
      if (before.length < t.minWholeSlices) continue;
      const typical = Math.max(median(before), 1);
      const ratio = peak / typical;
      if (ratio < t.ratio || (best && best.measure >= ratio)) continue;
      best = burst({
        kind,
        peakStart,
        peak,
        typical,
        ratio,
        activeSlices: slices.size,
        wholeSlicesBefore: before.length,
      });
    }
  }
  return best;
}

/** A burst found: a slice of `peak` events of `kind` against `typical` ones in the whole slices before it. */
function burst(found: {
  kind: 'impression' | 'click';
  peakStart: number;
  peak: number;
  typical: number;
  ratio: number;
  activeSlices: number;
  wholeSlicesBefore: number;
}): Finding {
  const t = FLAG_THRESHOLDS.burst;
  const { kind, peakStart, peak, typical, ratio } = found;
  return {
    signal: 'burst',
    measure: round(ratio, 2),
    threshold: t.ratio,
    evidence: {
      summary: `${peak} ${kind}s in the 10 seconds from ${iso(peakStart).slice(11, 19)} UTC, ${round(ratio, 1)}× its usual ${typical} per 10 seconds`,
      kind,
      peakStart: iso(peakStart),
      peakEvents: peak,
      medianEvents: typical,
      activeSlices: found.activeSlices,
      wholeSlices: found.wholeSlicesBefore,
      sliceSeconds: BURST_SLICE_MS / 1000,
      ratio: round(ratio, 3),
      thresholds: { ratio: t.ratio, minEvents: t.minEvents[kind], minWholeSlices: t.minWholeSlices },
    },
  };
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
 * A partner's keys together (`partner ctr`): their click-through rate against the baseline of their
 * placements, the other partners' (a partner cannot be its own baseline). Fraud spread over keys,
 * each clicked 4 times its placements' rate, stays under the key threshold of 5× however long it
 * lasts; the partner's keys together reach 3× with volume enough to be sure of it.
 */
export function partnerCtrFinding(
  keys: readonly KeyTraffic[],
  baseline: Baseline | undefined,
  window: { start: number; end: number },
): Finding | undefined {
  const t = FLAG_THRESHOLDS.partnerCtr;
  const clicked = keys.filter((key) => sum([...key.placements.values()].map((c) => c.clicks)) > 0);
  if (!baseline || clicked.length < t.minKeys) return undefined;
  const together = new Map<string, Counts>();
  for (const key of keys)
    for (const [placement, counts] of key.placements) addCounts(together, placement, counts);
  const found = ctrFinding({ placements: together }, baseline, { ...t, minExpectedClicks: Infinity });
  if (!found) return undefined;
  const perKey = keys
    .map((key) => {
      const figures = ctrFigures(key, baseline);
      return {
        apiKeyId: key.apiKeyId,
        impressions: figures?.impressions ?? 0,
        clicks: figures?.clicks ?? 0,
        ratio: figures ? round(figures.clicks / figures.expected, 3) : 0,
      };
    })
    .sort((a, b) => b.clicks - a.clicks || a.apiKeyId - b.apiKeyId);
  const e = found.evidence;
  return {
    signal: 'partner ctr',
    measure: found.measure,
    threshold: t.ratio,
    suspendable: false,
    evidence: {
      ...e,
      summary: `its ${keys.length} keys together: click-through rate ${percent(Number(e['ctr']))} is ${round(Number(e['ratio']), 1)}× its placements' baseline of ${percent(Number(e['baselineCtr']))} (${String(e['clicks'])} clicks on ${String(e['impressions'])} impressions); the most clicked key alone is ${round(perKey[0]?.ratio ?? 0, 1)}×`,
      keys: perKey,
      windowStart: iso(window.start),
      windowEnd: iso(window.end),
      measure: found.measure,
      threshold: t.ratio,
      thresholds: { ratio: t.ratio, minClicks: t.minClicks, minKeys: t.minKeys },
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
  /** The signals that may suspend a key by themselves (a partner flag never does: it names several keys). */
  signals: KeySignal[];
  /** A flag suspends only when its measure is at least this many times its threshold (1 to 100). */
  multiplier: number;
}

export const DEFAULT_FLAG_POLICY: FlagPolicy = {
  autoSuspend: false,
  signals: [...KEY_SIGNALS],
  multiplier: 2,
};

/** Whether the policy suspends the key of this finding by itself. */
export function policySuspends(
  policy: FlagPolicy,
  finding: Pick<Finding, 'signal' | 'measure' | 'threshold' | 'suspendable'>,
): boolean {
  if (!policy.autoSuspend || !(policy.signals as readonly string[]).includes(finding.signal)) return false;
  if (finding.suspendable === false) return false;
  // A share cannot pass 100%: its threshold times the multiplier is capped there.
  const bar =
    finding.signal === 'clicks without impressions'
      ? Math.min(finding.threshold * policy.multiplier, 1)
      : finding.threshold * policy.multiplier;
  return finding.measure >= bar;
}
