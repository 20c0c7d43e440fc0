import { describe, expect, it } from 'vitest';
import { BucketMap, take } from './token-bucket.js';

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

  it('takes no tokens away when the clock goes back, and refills from there', () => {
    const policy = { perSecond: 1, burst: 2 };
    const bucket = { tokens: 1, updatedAt: 600_000 };
    // Ten minutes back: still the one token it had, not 600 seconds' worth owed.
    expect(take(bucket, policy, 0)).toBe(0);
    expect(take(bucket, policy, 0)).toBe(1);
    expect(take(bucket, policy, 1_000)).toBe(0);
  });

  it('rounds the wait up to whole seconds, at least 1', () => {
    const bucket = { tokens: 0, updatedAt: 0 };
    expect(take(bucket, { perSecond: 0.1, burst: 1 }, 0)).toBe(10);
  });
});

describe('BucketMap', () => {
  const policy = { perSecond: 1, burst: 2 };

  it('keeps one bucket per id, each starting full', () => {
    const buckets = new BucketMap();
    expect([
      buckets.take('a', policy, 0),
      buckets.take('a', policy, 0),
      buckets.take('a', policy, 0),
    ]).toEqual([0, 0, 1]);
    expect(buckets.take('b', policy, 0)).toBe(0);
  });

  it('forgets the oldest bucket past maxEntries, so outside ids cannot grow memory', () => {
    const buckets = new BucketMap(2);
    buckets.take('a', policy, 0);
    buckets.take('a', policy, 0);
    buckets.take('b', policy, 0);
    buckets.take('c', policy, 0); // evicts 'a'
    expect(buckets.take('a', policy, 0)).toBe(0); // a fresh, full bucket again
  });
});
