// When a failed webhook is tried again (D19), and when its endpoint gives up. Pure: the delivery
// job owns the clock and the randomness.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The wait after each failure in a row: quick at first (a receiver restarting), then growing to
 * every 8 hours. With the jitter, about 16 attempts in the three days of `RETRY_PERIOD_MS`.
 */
export const RETRY_WAITS_MS: readonly number[] = [
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  1 * HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
];

/** How long an endpoint may fail, from its first failure in a row, before it is disabled. */
export const RETRY_PERIOD_MS = 72 * HOUR;

/**
 * The wait after the `failures`-th failure in a row (1 for the first), with ±20% jitter so that
 * endpoints that failed together (a receiver's outage) are not all tried again at once. `random`
 * is in [0, 1).
 */
export function retryWaitMs(failures: number, random: number): number {
  const base = RETRY_WAITS_MS[Math.min(Math.max(failures, 1), RETRY_WAITS_MS.length) - 1]!;
  return Math.round(base * (0.8 + 0.4 * random));
}

/** Whether an endpoint failing since `failingSince` has used up its retry period at `now`. */
export const retryPeriodOver = (failingSince: number, now: number): boolean =>
  now - failingSince >= RETRY_PERIOD_MS;
