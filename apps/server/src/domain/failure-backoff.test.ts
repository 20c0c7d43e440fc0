import { describe, expect, it } from 'vitest';
import { FailureBackoff } from './failure-backoff.js';

const policy = { free: 2, firstWaitMs: 1_000, maxWaitMs: 5_000, forgetAfterMs: 60_000 };

describe('FailureBackoff', () => {
  it('lets the free failures pass, then doubles the wait up to the most', () => {
    const backoff = new FailureBackoff(policy);
    backoff.fail('a', 0);
    expect(backoff.wait('a', 0)).toBe(0);
    const waits: number[] = [];
    let now = 0;
    for (let i = 0; i < 5; i++) {
      backoff.fail('a', now);
      const wait = backoff.wait('a', now);
      waits.push(wait);
      now += wait * 1000;
      expect(backoff.wait('a', now)).toBe(0);
    }
    expect(waits).toEqual([1, 2, 4, 5, 5]);
    expect(backoff.wait('b', now)).toBe(0);
  });

  it('forgets an id after a success, or after a quiet spell', () => {
    const backoff = new FailureBackoff(policy);
    for (let i = 0; i < 3; i++) backoff.fail('a', 0);
    backoff.succeed('a');
    expect(backoff.wait('a', 0)).toBe(0);
    for (let i = 0; i < 3; i++) backoff.fail('b', 0);
    backoff.fail('b', 60_000);
    expect(backoff.wait('b', 60_000)).toBe(0); // the count started again: one failure, free
  });

  it('keeps at most maxEntries ids, dropping the least recently failed', () => {
    const backoff = new FailureBackoff(policy, 2);
    for (const id of ['a', 'a', 'a', 'b', 'b', 'b', 'a', 'c', 'c', 'c']) backoff.fail(id, 0);
    expect(backoff.wait('a', 0)).toBeGreaterThan(0);
    expect(backoff.wait('b', 0)).toBe(0);
    expect(backoff.wait('c', 0)).toBeGreaterThan(0);
  });
});
