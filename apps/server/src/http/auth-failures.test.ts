import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter, failureSource } from './auth-failures.js';

describe('failureSource', () => {
  it('is an IPv4 address itself, also when a dual-stack socket reports it in IPv6 form', () => {
    expect(failureSource('192.0.2.1')).toBe('192.0.2.1');
    expect(failureSource('::ffff:192.0.2.1')).toBe('192.0.2.1');
  });

  it('is the /64 of an IPv6 address, however the address is written', () => {
    const block = failureSource('2001:db8:1:2::1');
    expect(block).toBe('2001:db8:1:2::/64');
    expect(failureSource('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(block);
    expect(failureSource('2001:db8:1:3::1')).not.toBe(block);
  });
});

describe('AuthFailureLimiter', () => {
  const still = () => 1_000;

  it('limits one client, and every address of one IPv6 /64 as one client', () => {
    const limiter = new AuthFailureLimiter({ perSecond: 1, burst: 3 }, still, { perSecond: 1, burst: 1_000 });
    for (let i = 1; i <= 3; i++) expect(limiter.fail(`2001:db8:1:2::${i}`)).toBe(0);
    expect(limiter.fail('2001:db8:1:2::99')).toBeGreaterThan(0);
    // Another block, another client.
    expect(limiter.fail('2001:db8:1:3::1')).toBe(0);
  });

  it('limits the instance as a whole, so many addresses cannot guess without end', () => {
    const limiter = new AuthFailureLimiter({ perSecond: 1, burst: 3 }, still, { perSecond: 1, burst: 5 });
    for (let i = 1; i <= 5; i++) expect(limiter.fail(`192.0.2.${i}`)).toBe(0);
    expect(limiter.fail('192.0.2.200')).toBeGreaterThan(0);
  });

  it('does not let one client over its own limit use up the instance’s', () => {
    const limiter = new AuthFailureLimiter({ perSecond: 1, burst: 3 }, still, { perSecond: 1, burst: 5 });
    for (let i = 0; i < 50; i++) limiter.fail('192.0.2.1');
    expect(limiter.fail('192.0.2.2')).toBe(0);
  });
});
