import type { BucketPolicy } from './token-bucket.js';

/** The two operation classes limits apply to (D7). */
export type OperationClass = 'fetch' | 'events';

/** A key's own limits; null means the default of D7. */
export interface KeyLimitSettings {
  fetchRate: number | null;
  fetchBurst: number | null;
  eventsRate: number | null;
  eventsBurst: number | null;
}

export type KeyPolicies = Readonly<Record<OperationClass, BucketPolicy>>;

/** The largest rate or burst an operator may give a key. */
export const MAX_LIMIT_SETTING = 1_000_000;

/** Every limit at its largest: for load tests and benchmarks, which must never be refused. */
export const HIGHEST_LIMITS: KeyLimitSettings = {
  fetchRate: MAX_LIMIT_SETTING,
  fetchBurst: MAX_LIMIT_SETTING,
  eventsRate: MAX_LIMIT_SETTING,
  eventsBurst: MAX_LIMIT_SETTING,
};

/** D7: fetch 100/s with burst 200; events 1000/s with burst 2000. */
export const DEFAULT_POLICIES: KeyPolicies = {
  fetch: { perSecond: 100, burst: 200 },
  events: { perSecond: 1000, burst: 2000 },
};

/** A key's effective policies: its own settings where it has them, the defaults otherwise. */
export function keyPolicies(settings: KeyLimitSettings): KeyPolicies {
  return {
    fetch: {
      perSecond: settings.fetchRate ?? DEFAULT_POLICIES.fetch.perSecond,
      burst: settings.fetchBurst ?? DEFAULT_POLICIES.fetch.burst,
    },
    events: {
      perSecond: settings.eventsRate ?? DEFAULT_POLICIES.events.perSecond,
      burst: settings.eventsBurst ?? DEFAULT_POLICIES.events.burst,
    },
  };
}

/**
 * The response fields of a refusal (D7): `Retry-After` in whole seconds, and the IETF draft's
 * `RateLimit-Policy` (quota `q` = the burst, per window `w` = the seconds a full refill takes)
 * and `RateLimit` (remaining `r` and seconds `t` until a token is back).
 */
export function rateLimitHeaders(
  operation: OperationClass,
  policy: BucketPolicy,
  retryAfter: number,
): Record<string, string> {
  const window = Math.max(1, Math.ceil(policy.burst / policy.perSecond));
  return {
    'retry-after': String(retryAfter),
    'ratelimit-policy': `"${operation}";q=${policy.burst};w=${window}`,
    ratelimit: `"${operation}";r=0;t=${retryAfter}`,
  };
}
