import { createHash } from 'node:crypto';
import {
  CLICK_WINDOW_MS,
  DOUBLE_CLICK_WINDOW_MS,
  MAX_UNCLICKED_IMPRESSIONS,
  UNSIGNED_DOUBLE_CLICK_WINDOW_MS,
} from '../domain/verdicts.js';
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
  /**
   * Forgets one impression of the pair at `at` that `add` remembered, if it is still unclicked: an
   * impression judged billable, remembered at once so that a click sent right after it finds it,
   * that the store then did not keep as billable.
   */
  retract(pair: string, at: number): void | Promise<void>;
  /**
   * Judges a click of the pair at `at` by `clicker` (the end user's signals, '' when none were
   * sent): `'double'` when the pair's previous click was the same clicker's within the double-click
   * window (`doubleClickWindow`); otherwise consumes the oldest unclicked impression after
   * `at - CLICK_WINDOW_MS`: `'counted'` if there was one, `'none'` if not.
   */
  take(pair: string, at: number, clicker: string): ClickTake | Promise<ClickTake>;
  /**
   * Forgets the click `take` remembered as the pair's last, if it still is: a click the store did not
   * keep (a 422, a 503, an idempotent replay), so that its retry is not taken for a double click.
   */
  forgetClick(pair: string, at: number, clicker: string): void | Promise<void>;
}

export type ClickTake = 'counted' | 'none' | 'double';

/** How close the same clicker's two clicks of a pair are a double click (see `DOUBLE_CLICK_WINDOW_MS`). */
export const doubleClickWindow = (clicker: string): number =>
  clicker === '' ? UNSIGNED_DOUBLE_CLICK_WINDOW_MS : DOUBLE_CLICK_WINDOW_MS;

/**
 * One clicker's last click of a pair: when, and what it was. Only a billed click has a second
 * click, and only one: the clicks of a script clicking with no impression stay `click without
 * impression` however close together, and so do a flood's after its first two, so a double click
 * never hides a flood from the key's flags.
 */
interface LastClick {
  at: number;
  /**
   * `billed`: it consumed an impression (a click after it within the window is its double click);
   * `double`, `rapid`: a double click, or a click within the window after one (a third click in
   * that little time is no person's: it consumes nothing and is not billed); `none`: not billed.
   */
  state: 'billed' | 'double' | 'rapid' | 'none';
}

/** How often the memory forgets the last clicks older than the double-click window. */
const LAST_CLICK_SWEEP_MS = 10_000;

/** One pair's unclicked impressions, oldest first, from `head` on. */
interface Unclicked {
  times: number[];
  head: number;
}

/** The default: per instance, bounded by `MAX_UNCLICKED_IMPRESSIONS` per pair and swept every window. */
export class MemoryClickCredits implements ClickCredits {
  private readonly pairs = new Map<string, Unclicked>();
  /** By pair and clicker (`pair\nclicker`). */
  private readonly lastClicks = new Map<string, LastClick>();
  private sweptAt = 0;
  private lastClicksSweptAt = 0;

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

  retract(pair: string, at: number): void {
    // Only on the rare path of an impression the store did not keep: a scan of at most the cap.
    const unclicked = this.pairs.get(pair);
    const found = unclicked ? unclicked.times.indexOf(at, unclicked.head) : -1;
    if (unclicked && found !== -1) unclicked.times.splice(found, 1);
  }

  take(pair: string, at: number, clicker: string): ClickTake {
    const who = `${pair}\n${clicker}`;
    const last = this.lastClicks.get(who);
    if (last !== undefined && last.state !== 'none' && Math.abs(at - last.at) < doubleClickWindow(clicker)) {
      last.at = at;
      if (last.state === 'billed') {
        last.state = 'double';
        return 'double';
      }
      last.state = 'rapid';
      return 'none';
    }
    const taken = this.consume(pair, at);
    const state = taken === 'counted' ? 'billed' : 'none';
    if (last === undefined) this.lastClicks.set(who, { at, state });
    else {
      last.at = at;
      last.state = state;
    }
    if (at - this.lastClicksSweptAt >= LAST_CLICK_SWEEP_MS) this.sweepLastClicks(at);
    return taken;
  }

  forgetClick(pair: string, at: number, clicker: string): void {
    const who = `${pair}\n${clicker}`;
    if (this.lastClicks.get(who)?.at === at) this.lastClicks.delete(who);
  }

  /** Consumes the pair's oldest unclicked impression in the window before `at`, if any. */
  private consume(pair: string, at: number): ClickTake {
    this.sweep(at);
    const unclicked = this.pairs.get(pair);
    if (!unclicked) return 'none';
    const since = at - CLICK_WINDOW_MS;
    const { times } = unclicked;
    while (unclicked.head < times.length && (times[unclicked.head] as number) <= since) unclicked.head++;
    if (unclicked.head === times.length) {
      this.pairs.delete(pair);
      return 'none';
    }
    unclicked.head++;
    compact(unclicked);
    return 'counted';
  }

  /** Forgets, once a window, the pairs whose newest impression is out of it. */
  private sweep(now: number): void {
    if (now - this.sweptAt < CLICK_WINDOW_MS) return;
    this.sweptAt = now;
    for (const [pair, { times }] of this.pairs) {
      if ((times[times.length - 1] as number) <= now - CLICK_WINDOW_MS) this.pairs.delete(pair);
    }
  }

  /** Forgets the last clicks too old to have a second click. */
  private sweepLastClicks(now: number): void {
    this.lastClicksSweptAt = now;
    for (const [who, { at }] of this.lastClicks) {
      if (at <= now - DOUBLE_CLICK_WINDOW_MS) this.lastClicks.delete(who);
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
/** Removes one impression at ARGV[1] if it is still there. */
const RETRACT_SCRIPT = `
redis.call('LREM', KEYS[1], 1, ARGV[1])
return 1
`;
/**
 * KEYS[2] holds the clicker's last click of the pair, \`at|state\` (0 none, 1 billed, 2 double, 3
 * rapid; see \`LastClick\`): within ARGV[3] ms of ARGV[2], 2 after a billed one (a double click), 0
 * after a double or rapid one. Otherwise pops impressions out of the window (ARGV[1]),
 * then the oldest one in it: 1 if there was one, 0 if not; and remembers this click.
 */
const TAKE_SCRIPT = `
local last = redis.call('GET', KEYS[2])
if last then
  local bar = string.find(last, '|', 1, true)
  local state = string.sub(last, bar + 1)
  if state ~= '0'
    and math.abs(tonumber(ARGV[2]) - tonumber(string.sub(last, 1, bar - 1))) < tonumber(ARGV[3]) then
    if state == '1' then
      redis.call('SET', KEYS[2], ARGV[2] .. '|2', 'PX', ARGV[4])
      return 2
    end
    redis.call('SET', KEYS[2], ARGV[2] .. '|3', 'PX', ARGV[4])
    return 0
  end
end
local found = 0
while true do
  local at = redis.call('LPOP', KEYS[1])
  if not at then break end
  if tonumber(at) > tonumber(ARGV[1]) then
    found = 1
    break
  end
end
redis.call('SET', KEYS[2], ARGV[2] .. '|' .. found, 'PX', ARGV[4])
return found
`;
/** Deletes the clicker's last click of the pair if it is still the one at ARGV[1]. */
const FORGET_CLICK_SCRIPT = `
local last = redis.call('GET', KEYS[1])
if last and string.sub(last, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|' then redis.call('DEL', KEYS[1]) end
return 1
`;
const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const ADD_SHA = sha(ADD_SCRIPT);
const TAKE_SHA = sha(TAKE_SCRIPT);
const RETRACT_SHA = sha(RETRACT_SCRIPT);
const FORGET_CLICK_SHA = sha(FORGET_CLICK_SCRIPT);

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

  retract(pair: string, at: number): void | Promise<void> {
    const shared = this.redis.evaluate(RETRACT_SCRIPT, RETRACT_SHA, this.key(pair), [String(at)]);
    if (shared === undefined) return this.fallback.retract(pair, at);
    return shared.then(
      () => undefined,
      () => this.fallback.retract(pair, at),
    );
  }

  take(pair: string, at: number, clicker: string): ClickTake | Promise<ClickTake> {
    const args = [
      String(at - CLICK_WINDOW_MS),
      String(at),
      String(doubleClickWindow(clicker)),
      String(DOUBLE_CLICK_WINDOW_MS),
    ];
    const keys = [this.key(pair), this.lastClickKey(pair, clicker)];
    const shared = this.redis.evaluate(TAKE_SCRIPT, TAKE_SHA, keys, args);
    if (shared === undefined) return this.fallback.take(pair, at, clicker);
    return shared.then(
      (found) => (Number(found) === 2 ? 'double' : Number(found) === 1 ? 'counted' : 'none'),
      () => this.fallback.take(pair, at, clicker),
    );
  }

  forgetClick(pair: string, at: number, clicker: string): void | Promise<void> {
    const key = this.lastClickKey(pair, clicker);
    const shared = this.redis.evaluate(FORGET_CLICK_SCRIPT, FORGET_CLICK_SHA, key, [String(at)]);
    if (shared === undefined) return this.fallback.forgetClick(pair, at, clicker);
    return shared.then(
      () => undefined,
      () => this.fallback.forgetClick(pair, at, clicker),
    );
  }

  private key(pair: string): string {
    return `${this.redis.keyPrefix}clicks:${pair}`;
  }

  /** The clicker's last click of the pair; the clicker (a user agent and an address) hashed short. */
  private lastClickKey(pair: string, clicker: string): string {
    const who = clicker === '' ? '' : createHash('sha1').update(clicker).digest('base64url');
    return `${this.redis.keyPrefix}lastclick:${pair}:${who}`;
  }
}
