import { describe, expect, it } from 'vitest';
import { take } from './token-bucket.js';

describe('token bucket', () => {
  it('allows a burst, then refills at the rate, and says how long to wait', () => {
    const policy = { perSecond: 2, burst: 3 };
    const bucket = { tokens: 3, updatedAt: 0 };
    expect([take(bucket, policy, 0), take(bucket, policy, 0), take(bucket, policy, 0)]).toEqual([0, 0, 0]);
    expect(take(bucket, policy, 0)).toBe(1);
    expect(take(bucket, policy, 500)).toBe(0); // half a second at 2/s is one token
    expect(take(bucket, policy, 500)).toBe(1);
    expect(take(bucket, policy, 10_000)).toBe(0); // never more than the burst
    expect(bucket.tokens).toBe(2);
  });

  it('rounds the wait up to whole seconds, at least 1', () => {
    const bucket = { tokens: 0, updatedAt: 0 };
    expect(take(bucket, { perSecond: 0.1, burst: 1 }, 0)).toBe(10);
  });
});
