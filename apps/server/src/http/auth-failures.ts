import { BucketMap, type BucketPolicy } from '../domain/token-bucket.js';

/** Failed authentications one address may make: a burst of 20, then 5 per second (D6). */
export const AUTH_FAILURE_POLICY: BucketPolicy = { perSecond: 5, burst: 20 };

/** Addresses tracked at most; past it the oldest entries go (a flood of addresses cannot grow memory). */
const MAX_ADDRESSES = 100_000;

/**
 * Limits repeated failed authentications per client address (D6). Only failures draw from the
 * bucket, so a partner's valid key is never slowed by them and never loses quota to them.
 */
export class AuthFailureLimiter {
  private readonly buckets = new BucketMap(MAX_ADDRESSES);

  constructor(
    private readonly policy: BucketPolicy = AUTH_FAILURE_POLICY,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Records a failure; returns 0 to answer 401, or the seconds to put in a 429's Retry-After. */
  fail(address: string): number {
    return this.buckets.take(address, this.policy, this.clock());
  }
}
