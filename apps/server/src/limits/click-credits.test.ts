import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_REDIS_URL } from '../../test/helpers/redis.js';
import { DOUBLE_CLICK_WINDOW_MS, UNSIGNED_DOUBLE_CLICK_WINDOW_MS } from '../domain/verdicts.js';
import { MemoryClickCredits, RedisClickCredits, type ClickCredits } from './click-credits.js';
import { RedisRateLimiter } from './redis-limiter.js';

const quiet = pino({ level: 'silent' });
const limiters: RedisRateLimiter[] = [];
afterAll(async () => {
  for (const limiter of limiters) await limiter.close();
});

const IMPLEMENTATIONS: [string, () => Promise<ClickCredits>][] = [
  ['memory', async () => new MemoryClickCredits()],
  [
    'redis',
    async () => {
      const limiter = await RedisRateLimiter.connect(SHARED_REDIS_URL, quiet, Date.now, 'placard-test:');
      limiters.push(limiter);
      expect(limiter.health().mode).toBe('shared');
      return new RedisClickCredits(limiter);
    },
  ],
];

const ALICE = 'Mozilla/5.0 (Alice)\n198.18.0.1';
const BOB = 'Mozilla/5.0 (Bob)\n198.18.0.2';

describe.each(IMPLEMENTATIONS)('click credits in %s (D15)', (_name, open) => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  const newPair = () => `1:${randomBytes(6).toString('hex')}:header_banner`;

  it('takes the second click of one end user within the double-click window for a double click, whatever is unclicked', async () => {
    const credits = await open();
    const pair = newPair();
    for (let i = 0; i < 3; i++) await credits.add(pair, now);
    expect(await credits.take(pair, now + 1_000, ALICE)).toBe('counted');
    expect(await credits.take(pair, now + 1_100, ALICE)).toBe('double');
    // Another person's click of the same pair at once is billed; so is Alice's, later.
    expect(await credits.take(pair, now + 1_150, BOB)).toBe('counted');
    expect(await credits.take(pair, now + 1_150 + DOUBLE_CLICK_WINDOW_MS, ALICE)).toBe('counted');
    expect(await credits.take(pair, now + 1_200 + DOUBLE_CLICK_WINDOW_MS, BOB)).toBe('none');
  });

  it('without end-user signals, takes any second click within the shorter window for a double click', async () => {
    const credits = await open();
    const pair = newPair();
    for (let i = 0; i < 3; i++) await credits.add(pair, now);
    expect(await credits.take(pair, now + 1_000, '')).toBe('counted');
    expect(await credits.take(pair, now + 1_100, '')).toBe('double');
    expect(await credits.take(pair, now + 1_100 + UNSIGNED_DOUBLE_CLICK_WINDOW_MS, '')).toBe('counted');
  });

  it('never takes a click that was not billed for the first of a double click: a script clicking from nowhere stays unpaired', async () => {
    const credits = await open();
    const pair = newPair();
    expect(await credits.take(pair, now, '')).toBe('none');
    expect(await credits.take(pair, now + 100, '')).toBe('none');
    expect(await credits.take(pair, now + 200, ALICE)).toBe('none');
    expect(await credits.take(pair, now + 300, ALICE)).toBe('none');
  });

  it('takes a third click within the window for nobody’s: not billed, consuming nothing', async () => {
    const credits = await open();
    const pair = newPair();
    for (let i = 0; i < 5; i++) await credits.add(pair, now);
    expect(await credits.take(pair, now, '')).toBe('counted');
    expect(await credits.take(pair, now + 50, '')).toBe('double');
    expect(await credits.take(pair, now + 100, '')).toBe('none');
    expect(await credits.take(pair, now + 150, '')).toBe('none');
    expect(await credits.take(pair, now + 1_000, '')).toBe('counted');
  });

  it('forgets an impression taken back before it is clicked', async () => {
    const credits = await open();
    const pair = newPair();
    await credits.add(pair, now);
    await credits.add(pair, now + 1);
    await credits.retract(pair, now);
    expect(await credits.take(pair, now + 1_000, ALICE)).toBe('counted');
    expect(await credits.take(pair, now + 5_000, ALICE)).toBe('none');
  });
});
