import type { KeyPolicies, OperationClass } from '../domain/rate-limits.js';
import { take, type Bucket } from '../domain/token-bucket.js';

/**
 * Per key and operation class token buckets (D7), in this instance's memory. Only authenticated
 * requests reach it, so failed authentication never spends a real key's quota (D6).
 */
export class KeyRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Takes one token; returns 0 when allowed, else the whole seconds until one is back. */
  take(apiKeyId: number, operation: OperationClass, policies: KeyPolicies): number {
    const policy = policies[operation];
    const now = this.clock();
    const id = `${apiKeyId}:${operation}`;
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = { tokens: policy.burst, updatedAt: now };
      this.buckets.set(id, bucket);
    }
    return take(bucket, policy, now);
  }
}
