// Frequency caps (D20): at most N impressions of a campaign per viewer in any hour, day or week.
// Pure: what a cap is, how it is validated, and whether a viewer's impressions reach it.
import { invalid, type FieldProblem } from './errors.js';

export const FREQUENCY_PERIODS = ['hour', 'day', 'week'] as const;
export type FrequencyPeriod = (typeof FREQUENCY_PERIODS)[number];

/**
 * A rolling window: "3 per day" is at most 3 in any 24 hours, not per calendar day. A viewer is
 * nobody's local day (partners send no time zone for their users), and a rolling window cannot be
 * gamed by showing the cap just before midnight and again just after it.
 */
export const PERIOD_MS: Readonly<Record<FrequencyPeriod, number>> = {
  hour: 60 * 60 * 1000,
  day: 24 * 60 * 60 * 1000,
  week: 7 * 24 * 60 * 60 * 1000,
};

/** At most `impressions` billable impressions per viewer in any `per`. */
export interface FrequencyCap {
  impressions: number;
  per: FrequencyPeriod;
}

/**
 * The highest cap a campaign may set: what a viewer's remembered impressions of one campaign are
 * bounded by (only impressions under a cap are remembered), so memory per viewer stays small.
 */
export const MAX_FREQUENCY_CAP = 1_000;

/** The longest window of any cap: how long a viewer's impressions are kept at most. */
export const LONGEST_FREQUENCY_WINDOW_MS = PERIOD_MS.week;

/** The longest `viewer` value a partner may send (D20). */
export const MAX_VIEWER_LENGTH = 128;

export const VIEWER_MESSAGE = `viewer must be a string of 1 to ${MAX_VIEWER_LENGTH} characters`;

/** A partner's `viewer` value, checked: a non-empty string of at most 128 characters. */
export function parseViewer(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_VIEWER_LENGTH)
    throw invalid(VIEWER_MESSAGE);
  return value;
}

/**
 * Validates a campaign's `frequencyCaps`: absent or null is none; otherwise an array of at most one
 * cap per period, each a whole number of impressions from 1 to `MAX_FREQUENCY_CAP`. Returned
 * shortest period first, the order they are shown and checked in.
 */
export function readFrequencyCaps(raw: unknown, field: string, problems: FieldProblem[]): FrequencyCap[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push({
      field,
      message: 'must be an array of { "impressions": N, "per": "hour" | "day" | "week" }',
    });
    return [];
  }
  const caps: FrequencyCap[] = [];
  raw.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    const cap = item !== null && typeof item === 'object' ? (item as Record<string, unknown>) : {};
    const { impressions, per } = cap;
    if (!(FREQUENCY_PERIODS as readonly unknown[]).includes(per)) {
      problems.push({ field: `${at}.per`, message: `must be one of: ${FREQUENCY_PERIODS.join(', ')}` });
      return;
    }
    if (
      typeof impressions !== 'number' ||
      !Number.isInteger(impressions) ||
      impressions < 1 ||
      impressions > MAX_FREQUENCY_CAP
    ) {
      problems.push({
        field: `${at}.impressions`,
        message: `must be a whole number from 1 to ${MAX_FREQUENCY_CAP}`,
      });
      return;
    }
    if (caps.some((other) => other.per === per)) {
      problems.push({ field: `${at}.per`, message: `only one cap per ${per as string}` });
      return;
    }
    caps.push({ impressions, per: per as FrequencyPeriod });
  });
  return caps.sort((a, b) => PERIOD_MS[a.per] - PERIOD_MS[b.per]);
}

/**
 * Whether one more impression at `at` would take the viewer past one of `caps`, where
 * `countSince(since)` counts the viewer's impressions of the campaign after `since` (those after
 * `at` too: a backlog sent late, an `occurredAt` in the past, is judged against everything the
 * viewer was shown around it).
 */
export function capReachedBy(
  caps: readonly FrequencyCap[],
  at: number,
  countSince: (since: number) => number,
): boolean {
  for (const cap of caps) if (countSince(at - PERIOD_MS[cap.per]) >= cap.impressions) return true;
  return false;
}

/** `capReachedBy` given the times of the viewer's billable impressions of the campaign. */
export function frequencyCapReached(
  times: readonly number[],
  caps: readonly FrequencyCap[],
  at: number,
): boolean {
  return capReachedBy(caps, at, (since) => {
    let inWindow = 0;
    for (const time of times) if (time > since) inWindow++;
    return inWindow;
  });
}

/** The caps as people read them: "3 per hour, 10 per day". */
export function describeFrequencyCaps(caps: readonly FrequencyCap[]): string {
  return caps.map((cap) => `${cap.impressions} per ${cap.per}`).join(', ');
}

/**
 * Frequency caps written as people type them on a command line: `3/hour,10/day` ('' or `none`:
 * none). Returns them in the API's form for `readFrequencyCaps` to validate; a part that is not
 * `N/period` is a 400 naming it.
 */
export function frequencyCapsFromText(text: string): { impressions: number; per: string }[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'none') return [];
  return trimmed.split(',').map((part) => {
    const match = /^\s*(\d{1,7})\s*\/\s*([a-z]+)\s*$/.exec(part);
    if (match === null)
      throw invalid(
        `frequency cap "${part.trim()}" is not N/period, such as 3/day (periods: ${FREQUENCY_PERIODS.join(', ')})`,
      );
    return { impressions: Number(match[1]), per: match[2] as string };
  });
}
