/** How failed calls are retried: 429, 5xx and network errors only; never 4xx otherwise. */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 4. */
  maxAttempts: number;
  /** The first backoff ceiling; it doubles with each attempt. Default 200 ms. */
  baseDelayMs: number;
  /** No single wait is longer than this. Default 5 s. */
  maxDelayMs: number;
  /** No retry starts once this much time has passed since the first attempt. Default 15 s. */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxElapsedMs: 15_000,
};

/**
 * The wait before retry number `retry` (1 for the first retry): "full jitter", a uniform draw
 * between 0 and the exponential ceiling, so many clients failing together do not retry together;
 * never shorter than the server's `Retry-After` when it gave one.
 */
export function backoffMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number,
  retryAfterMs: number | null,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = Math.floor(random() * ceiling);
  return retryAfterMs === null ? jittered : Math.max(retryAfterMs, jittered);
}

/** `Retry-After` as milliseconds: whole seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
