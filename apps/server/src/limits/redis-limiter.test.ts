import { randomInt } from 'node:crypto';
import pino from 'pino';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { OwnRedis, SHARED_REDIS_URL } from '../../test/helpers/redis.js';
import { DEFAULT_REDIS_KEY_PREFIX } from '../config.js';
import { RedisRateLimiter } from './redis-limiter.js';

const quiet = pino({ level: 'silent' });

describe('RedisRateLimiter', () => {
  const opened: RedisRateLimiter[] = [];
  const open = async (url = SHARED_REDIS_URL, logger = quiet, keyPrefix?: string) => {
    const limiter = await RedisRateLimiter.connect(url, logger, undefined, keyPrefix);
    opened.push(limiter);
    return limiter;
  };
  afterAll(async () => {
    for (const limiter of opened) await limiter.close();
  });

  it('lets a burst through, then refuses with the seconds until a token is back', async () => {
    const limiter = await open();
    expect(limiter.health().mode).toBe('shared');
    const id = randomInt(1, 2 ** 47);
    const policy = { perSecond: 0.5, burst: 3 };
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => limiter.take('fetch', id, policy)),
    );
    expect(answers).toEqual([0, 0, 0, 2, 2]);
  });

  it('keeps a spent bucket in Redis at least as long as it takes to refill', async () => {
    // A bucket that expired sooner would be read back full: a spent key could go again early.
    const limiter = await open();
    const id = randomInt(1, 2 ** 47);
    const policy = { perSecond: 0.01, burst: 3 };
    const answers = await Promise.all(
      Array.from({ length: 4 }, async () => limiter.take('fetch', id, policy)),
    );
    expect(answers.at(-1)).toBeGreaterThan(0);
    const redis = createClient({ url: SHARED_REDIS_URL });
    await redis.connect();
    try {
      // Read on Redis's clock in one script: the time the bucket was last taken from (`at`, which
      // the limiter writes from Redis's TIME), the time now and the time left. What was set is
      // then exact, however long this test took to ask.
      const [left, now, at] = await redis.sendCommand<number[]>([
        'EVAL',
        `local t = redis.call('TIME')
         return {redis.call('PTTL', KEYS[1]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000),
           tonumber(redis.call('HGET', KEYS[1], 'at'))}`,
        '1',
        `${DEFAULT_REDIS_KEY_PREFIX}ratelimit:${id}:fetch`,
      ]);
      expect(left + (now - at)).toBeGreaterThanOrEqual((policy.burst / policy.perSecond) * 1000);
    } finally {
      await redis.close();
    }
  });

  it('is one bucket for every limiter sharing the Redis, as for instances', async () => {
    const [first, second] = [await open(), await open()];
    const id = randomInt(1, 2 ** 47);
    const policy = { perSecond: 1, burst: 10 };
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (i % 2 === 0 ? first : second).take('fetch', id, policy)),
    );
    expect(answers.filter((wait) => wait === 0)).toHaveLength(10);
  });

  it('keeps the buckets of deployments with different key prefixes apart in one Redis', async () => {
    const [staging, production] = [await open(undefined, quiet, 'staging:'), await open()];
    const id = randomInt(1, 2 ** 47);
    const policy = { perSecond: 0.5, burst: 2 };
    expect([await staging.take('fetch', id, policy), await staging.take('fetch', id, policy)]).toEqual([
      0, 0,
    ]);
    expect(await staging.take('fetch', id, policy)).toBeGreaterThan(0);
    // The same key id in the other deployment still has its whole burst.
    expect(await production.take('fetch', id, policy)).toBe(0);
  });

  it('falls back to per-instance limits while Redis is gone, says so, and shares again when it is back', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const redis = await OwnRedis.start();
    try {
      const limiter = await open(redis.url, logger);
      const policy = { perSecond: 0.001, burst: 2 };
      expect(await limiter.take('fetch', 1, policy)).toBe(0);

      await redis.stop();
      await expect.poll(() => limiter.health().mode).toBe('degraded');
      expect(limiter.health().detail).toMatch(/^redis unavailable since .*: limits are per instance$/);
      expect(lines.join('')).toContain('redis is unavailable: rate limits are per instance');
      // Still limiting, with this instance's own bucket (a fresh one: the shared state is out of reach).
      expect([await limiter.take('fetch', 1, policy), await limiter.take('fetch', 1, policy)]).toEqual([
        0, 0,
      ]);
      expect(await limiter.take('fetch', 1, policy)).toBeGreaterThan(0);

      await redis.restart();
      // Its reconnects back off: a busy machine stretches them, so the wait is generous.
      await expect.poll(() => limiter.health().mode, { timeout: 60_000 }).toBe('shared');
      expect(lines.join('')).toContain('redis is back: rate limits are shared again');
      // The restarted Redis is empty and has no script loaded: the bucket starts full again.
      expect(await limiter.take('fetch', 2, policy)).toBe(0);
    } finally {
      await redis.stop();
    }
  });

  it('starts degraded, without waiting more than about two seconds, when Redis is not there', async () => {
    const redis = await OwnRedis.start();
    await redis.stop();
    const started = Date.now();
    const limiter = await open(redis.url);
    // It waits about two seconds; the bound is far from that only so a busy machine cannot fail it,
    // and still fails a start that waits for Redis to come (a hang, or the client's reconnects).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(limiter.health().mode).toBe('degraded');
    expect(limiter.take('fetch', 3, { perSecond: 1, burst: 1 })).toBe(0);
  });
});
