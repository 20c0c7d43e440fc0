import { createHash } from 'node:crypto';
import { CLICK_WINDOW_MS, MAX_UNCLICKED_IMPRESSIONS } from '../domain/verdicts.js';
import type { RedisRateLimiter } from './redis-limiter.js';

/**
 * The billable impressions not clicked yet, per pair (D15): a pair is an API key, a campaign and a
 * placement. A click is billable only if it consumes one from the last `CLICK_WINDOW_MS`. In this
 * instance's memory by default; in Redis, shared by every instance, when `PLACARD_REDIS_URL` is set
 * (falling back to memory while Redis is unreachable, like the rate limiter).
 */
export interface ClickCredits {
  /** Remembers a billable impression of the pair at `at`. */
  add(pair: string, at: number): void | Promise<void>;
  /** Consumes the oldest unclicked impression of the pair after `now - CLICK_WINDOW_MS`: whether there was one. */
  take(pair: string, now: number): boolean | Promise<boolean>;
}

/** One pair's unclicked impressions, oldest first, from `head` on. */
interface Unclicked {
  times: number[];
  head: number;
}

/** The default: per instance, bounded by `MAX_UNCLICKED_IMPRESSIONS` per pair and swept every window. */
export class MemoryClickCredits implements ClickCredits {
  private readonly pairs = new Map<string, Unclicked>();
  private sweptAt = 0;

  add(pair: string, at: number): void {
    let unclicked = this.pairs.get(pair);
    if (!unclicked) {
      unclicked = { times: [], head: 0 };
      this.pairs.set(pair, unclicked);
    }
    unclicked.times.push(at);
    if (unclicked.times.length - unclicked.head > MAX_UNCLICKED_IMPRESSIONS) unclicked.head++;
    compact(unclicked);
    this.sweep(at);
  }

  take(pair: string, now: number): boolean {
    const unclicked = this.pairs.get(pair);
    if (!unclicked) return false;
    const since = now - CLICK_WINDOW_MS;
    const { times } = unclicked;
    while (unclicked.head < times.length && (times[unclicked.head] as number) <= since) unclicked.head++;
    if (unclicked.head === times.length) {
      this.pairs.delete(pair);
      return false;
    }
    unclicked.head++;
    compact(unclicked);
    return true;
  }

  /** Forgets, once a window, the pairs whose newest impression is out of it. */
  private sweep(now: number): void {
    if (now - this.sweptAt < CLICK_WINDOW_MS) return;
    this.sweptAt = now;
    for (const [pair, { times }] of this.pairs) {
      if ((times[times.length - 1] as number) <= now - CLICK_WINDOW_MS) this.pairs.delete(pair);
    }
  }
}

function compact(unclicked: Unclicked): void {
  if (unclicked.head > 64 && unclicked.head * 2 > unclicked.times.length) {
    unclicked.times = unclicked.times.slice(unclicked.head);
    unclicked.head = 0;
  }
}

/** A pair's list in Redis: impression times, oldest first, at most the cap, gone a window after the last. */
const ADD_SCRIPT = `
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;
/** Pops impressions out of the window, then the oldest one in it: 1 if there was one. */
const TAKE_SCRIPT = `
while true do
  local at = redis.call('LPOP', KEYS[1])
  if not at then return 0 end
  if tonumber(at) > tonumber(ARGV[1]) then return 1 end
end
`;
const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const ADD_SHA = sha(ADD_SCRIPT);
const TAKE_SHA = sha(TAKE_SCRIPT);

/**
 * Unclicked impressions in Redis, so an impression stored through one instance can be clicked
 * through another. Uses the rate limiter's connection; while it is unavailable, this instance's
 * memory (so a click may then be judged without the impressions other instances saw).
 */
export class RedisClickCredits implements ClickCredits {
  private readonly fallback = new MemoryClickCredits();

  constructor(private readonly redis: RedisRateLimiter) {}

  add(pair: string, at: number): void | Promise<void> {
    const args = [String(at), String(MAX_UNCLICKED_IMPRESSIONS), String(CLICK_WINDOW_MS)];
    const shared = this.redis.evaluate(ADD_SCRIPT, ADD_SHA, this.key(pair), args);
    if (shared === undefined) return this.fallback.add(pair, at);
    return shared.then(
      () => undefined,
      () => this.fallback.add(pair, at),
    );
  }

  take(pair: string, now: number): boolean | Promise<boolean> {
    const shared = this.redis.evaluate(TAKE_SCRIPT, TAKE_SHA, this.key(pair), [
      String(now - CLICK_WINDOW_MS),
    ]);
    if (shared === undefined) return this.fallback.take(pair, now);
    return shared.then(
      (found) => Number(found) === 1,
      () => this.fallback.take(pair, now),
    );
  }

  private key(pair: string): string {
    return `${this.redis.keyPrefix}clicks:${pair}`;
  }
}
