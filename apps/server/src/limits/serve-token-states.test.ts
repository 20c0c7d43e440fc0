import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_REDIS_URL } from '../../test/helpers/redis.js';
import { CLICK_WINDOW_MS, DOUBLE_CLICK_WINDOW_MS } from '../domain/verdicts.js';
import { RedisRateLimiter } from './redis-limiter.js';
import {
  MemoryServeTokenStates,
  RedisServeTokenStates,
  type ServeTokenStates,
} from './serve-token-states.js';

const quiet = pino({ level: 'silent' });
const limiters: RedisRateLimiter[] = [];
afterAll(async () => {
  for (const limiter of limiters) await limiter.close();
});
const redisStates = async (): Promise<ServeTokenStates> => {
  const limiter = await RedisRateLimiter.connect(SHARED_REDIS_URL, quiet, Date.now, 'placard-test:');
  limiters.push(limiter);
  expect(limiter.health().mode).toBe('shared');
  return new RedisServeTokenStates(limiter);
};

/** Each implementation twice: two instances (one memory is one instance; Redis is shared). */
const IMPLEMENTATIONS: [string, () => Promise<[ServeTokenStates, ServeTokenStates]>][] = [
  [
    'memory',
    async () => {
      const states = new MemoryServeTokenStates();
      return [states, states];
    },
  ],
  ['redis', async () => [await redisStates(), await redisStates()]],
];

describe.each(IMPLEMENTATIONS)('serve token states in %s (D15)', (_name, open) => {
  const now = Date.parse('2026-11-22T10:00:00Z');

  it('takes one impression per token, then one click after it, across instances', async () => {
    const [first, second] = await open();
    const id = randomBytes(12).toString('base64url');
    expect(await second.claimClick(id, now)).toBe('none');
    expect(await first.claimImpression(id, now, now - 100)).toBe(true);
    expect(await second.claimImpression(id, now, now)).toBe(false);
    // Clickable before the store answered, at the impression's own time.
    expect(await second.claimClick(id, now + 5)).toBe(now - 100);
    await first.settleImpression(id, now - 100);
    // The second click of a double click, then a later one: a replay.
    expect(await first.claimClick(id, now + 6)).toBe('double');
    expect(await first.claimClick(id, now + 6 - DOUBLE_CLICK_WINDOW_MS)).toBe('double');
    expect(await first.claimClick(id, now + 5 + DOUBLE_CLICK_WINDOW_MS)).toBe('clicked');
    await second.releaseClick(id);
    await first.settleImpression(id, now);
    expect(await first.claimClick(id, now + CLICK_WINDOW_MS)).toBe('late');
    expect(await first.claimClick(id, now + CLICK_WINDOW_MS - 1)).toBe(now);
  });

  it('gives back a released impression, and keeps nothing to click of an unbillable one', async () => {
    const [first, second] = await open();
    const id = randomBytes(12).toString('base64url');
    expect(await first.claimImpression(id, now, now)).toBe(true);
    await first.settleImpression(id, 'release');
    expect(await second.claimImpression(id, now, now)).toBe(true);
    await second.settleImpression(id, 'unbillable');
    expect(await first.claimImpression(id, now, now)).toBe(false);
    expect(await first.claimClick(id, now + 2_000)).toBe('none');
  });
});

describe('serve token states in memory', () => {
  it('forgets the oldest tokens past its bound, and expired ones', async () => {
    const states = new MemoryServeTokenStates(2);
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(states.claimImpression('a', now, now)).toBe(true);
    expect(states.claimImpression('b', now, now)).toBe(true);
    expect(states.claimImpression('c', now, now)).toBe(true);
    expect(states.claimImpression('a', now, now)).toBe(true); // forgotten
    expect(states.claimImpression('c', now, now)).toBe(false);
    expect(states.claimImpression('c', now + 3 * CLICK_WINDOW_MS, now + 3 * CLICK_WINDOW_MS)).toBe(true); // expired
  });
});
