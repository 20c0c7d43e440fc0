/** A token bucket: `burst` tokens, refilled at `perSecond`; pure state, the caller owns the clock. */
export interface Bucket {
  tokens: number;
  updatedAt: number;
}

export interface BucketPolicy {
  perSecond: number;
  burst: number;
}

/**
 * Takes one token at `now`. Returns 0 when allowed, otherwise the whole seconds (at least 1) until
 * a token is back, for `Retry-After`.
 */
export function take(bucket: Bucket, policy: BucketPolicy, now: number): number {
  const refilled = Math.min(
    policy.burst,
    bucket.tokens + ((now - bucket.updatedAt) / 1000) * policy.perSecond,
  );
  bucket.updatedAt = now;
  if (refilled >= 1) {
    bucket.tokens = refilled - 1;
    return 0;
  }
  bucket.tokens = refilled;
  return Math.max(1, Math.ceil((1 - refilled) / policy.perSecond));
}
