/**
 * Milliseconds on a clock that only moves forward (`performance.now`): what every limit measures
 * refills, waits and windows with. The wall clock (`Date.now`) is for timestamps people read; an
 * operator or NTP may step it back, and a bucket timed by it would then see time run backwards and
 * refuse every request for as long as the step.
 */
export const monotonicNow = (): number => performance.now();

/**
 * A token bucket: `burst` tokens, refilled at `perSecond`; pure state, the caller owns the clock
 * (`monotonicNow` in the product).
 */
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
  // A clock that went back refills nothing rather than taking tokens away (as the Redis script does).
  const elapsed = Math.max(0, now - bucket.updatedAt);
  const refilled = Math.min(policy.burst, bucket.tokens + (elapsed / 1000) * policy.perSecond);
  bucket.updatedAt = now;
  if (refilled >= 1) {
    bucket.tokens = refilled - 1;
    return 0;
  }
  bucket.tokens = refilled;
  return Math.max(1, Math.ceil((1 - refilled) / policy.perSecond));
}

/**
 * Token buckets by id, each created full on first use. `maxEntries` bounds memory when ids come
 * from outside (client addresses): past it the oldest bucket goes.
 */
export class BucketMap<Id = string> {
  private readonly buckets = new Map<Id, Bucket>();

  constructor(private readonly maxEntries = Infinity) {}

  /** Takes one token from `id`'s bucket; 0 when allowed, else the whole seconds until one is back. */
  take(id: Id, policy: BucketPolicy, now: number): number {
    let bucket = this.buckets.get(id);
    if (!bucket) {
      if (this.buckets.size >= this.maxEntries) this.buckets.delete(this.buckets.keys().next().value as Id);
      bucket = { tokens: policy.burst, updatedAt: now };
      this.buckets.set(id, bucket);
    }
    return take(bucket, policy, now);
  }
}
