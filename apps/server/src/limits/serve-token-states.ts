import { createHash } from 'node:crypto';
import { SERVE_TOKEN_TTL_MS } from '../domain/serve-tokens.js';
import { CLICK_WINDOW_MS, DOUBLE_CLICK_WINDOW_MS } from '../domain/verdicts.js';
import type { RedisRateLimiter } from './redis-limiter.js';

/**
 * What each serve token (D15) was used for, by its id (its nonce): its one impression, then its
 * one click. In this instance's memory by default; in Redis, shared by every instance, when
 * `PLACARD_REDIS_URL` is set (falling back to memory while Redis is unreachable, like the click
 * credits). The judge claims on the request path and settles once the store has answered, so a
 * claim the store did not take (a 503, a 422, an idempotent replay) is given back.
 */
export interface ServeTokenStates {
  /**
   * Claims the token's impression, at `at` (the event's time), received at `now`: false when it was
   * claimed already (a replay). Its click may come from then on, before the store has answered, so
   * that a click sent right after its impression finds it.
   */
  claimImpression(id: string, now: number, at: number): boolean | Promise<boolean>;
  /**
   * After the store answered a claimed impression: `at`, its time, stored as billable;
   * `'unbillable'`, stored but not billable (nothing to click from now on); or `'release'`, not
   * stored (the claim is given back).
   */
  settleImpression(id: string, outcome: number | 'unbillable' | 'release'): void | Promise<void>;
  /**
   * Claims the token's click at `at` (the event's time): the time of its billable impression (the
   * click is claimed), or why there is none to claim: `'none'` (no billable impression), `'late'`
   * (the impression is more than `CLICK_WINDOW_MS` older), `'double'` (claimed already, by a click
   * less than `DOUBLE_CLICK_WINDOW_MS` apart), `'clicked'` (claimed already, longer ago).
   */
  claimClick(id: string, at: number): TokenClick | Promise<TokenClick>;
  /** Gives back a claimed click the store did not take. */
  releaseClick(id: string): void | Promise<void>;
}

export type TokenClick = number | 'none' | 'late' | 'double' | 'clicked';

/**
 * How long a token's state is kept after its impression was claimed: long enough to refuse a replay
 * while the token lives (an impression comes at most `SERVE_TOKEN_TTL_MS` after the fetch) and to
 * take its click (at most `CLICK_WINDOW_MS` after the impression), with a minute for the store.
 */
export const SERVE_TOKEN_STATE_MS = Math.max(SERVE_TOKEN_TTL_MS, CLICK_WINDOW_MS) + 60_000;

/**
 * Tokens whose state one instance keeps in memory at most; past it the oldest are forgotten (a
 * replay of a forgotten token is then billed, a click on one is not). About 100 bytes each.
 * With Redis there is no such bound.
 */
export const MAX_SERVE_TOKENS_IN_MEMORY = 1_000_000;

interface State {
  expiresAt: number;
  /** The impression's time (billable, or not answered by the store yet), or `'unbillable'`. */
  impression: number | 'unbillable';
  /** The time of the claimed click; null while none is. */
  clickedAt: number | null;
}

/** The default: per instance, bounded, expired states dropped as new ones come. */
export class MemoryServeTokenStates implements ServeTokenStates {
  private readonly states = new Map<string, State>();

  constructor(private readonly maxTokens = MAX_SERVE_TOKENS_IN_MEMORY) {}

  claimImpression(id: string, now: number, at: number): boolean {
    const known = this.states.get(id);
    if (known !== undefined && known.expiresAt > now) return false;
    this.states.delete(id);
    this.sweep(now);
    this.states.set(id, { expiresAt: now + SERVE_TOKEN_STATE_MS, impression: at, clickedAt: null });
    return true;
  }

  settleImpression(id: string, outcome: number | 'unbillable' | 'release'): void {
    if (outcome === 'release') this.states.delete(id);
    else {
      const state = this.states.get(id);
      if (state !== undefined) state.impression = outcome;
    }
  }

  claimClick(id: string, at: number): TokenClick {
    const state = this.states.get(id);
    if (state === undefined || state.expiresAt <= at || typeof state.impression !== 'number') return 'none';
    if (state.impression <= at - CLICK_WINDOW_MS) return 'late';
    if (state.clickedAt !== null) {
      return Math.abs(at - state.clickedAt) < DOUBLE_CLICK_WINDOW_MS ? 'double' : 'clicked';
    }
    state.clickedAt = at;
    return state.impression;
  }

  releaseClick(id: string): void {
    const state = this.states.get(id);
    if (state !== undefined) state.clickedAt = null;
  }

  /**
   * States are inserted in claim order, each living as long, so the expired ones are at the front;
   * past the bound the oldest go too.
   */
  private sweep(now: number): void {
    for (const [id, state] of this.states) {
      if (state.expiresAt > now && this.states.size < this.maxTokens) return;
      this.states.delete(id);
    }
  }
}

/** A token's hash in Redis: `i` its impression (`x` unbillable, or its time), `c` its click's time. */
const CLAIM_IMPRESSION_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'i', ARGV[2]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;
/** ARGV[1]: '' gives the claim back; otherwise the impression's new value. */
const SETTLE_IMPRESSION_SCRIPT = `
if ARGV[1] == '' then
  redis.call('DEL', KEYS[1])
elseif redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'i', ARGV[1])
end
return 1
`;
/**
 * ARGV[1]: the oldest impression time still clickable, exclusive; ARGV[2] the click's time; ARGV[3]
 * the double-click window. -1 none, -2 late, -3 clicked, -4 a double click.
 */
const CLAIM_CLICK_SCRIPT = `
local i = redis.call('HGET', KEYS[1], 'i')
if not i or i == 'x' then return -1 end
if tonumber(i) <= tonumber(ARGV[1]) then return -2 end
if redis.call('HSETNX', KEYS[1], 'c', ARGV[2]) == 0 then
  local c = tonumber(redis.call('HGET', KEYS[1], 'c'))
  if math.abs(tonumber(ARGV[2]) - c) < tonumber(ARGV[3]) then return -4 end
  return -3
end
return i
`;
const RELEASE_CLICK_SCRIPT = `
redis.call('HDEL', KEYS[1], 'c')
return 1
`;
const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const SHAS = new Map(
  [CLAIM_IMPRESSION_SCRIPT, SETTLE_IMPRESSION_SCRIPT, CLAIM_CLICK_SCRIPT, RELEASE_CLICK_SCRIPT].map(
    (script) => [script, sha(script)],
  ),
);

/**
 * Token states in Redis, so a token's impression reported to one instance can be clicked, and
 * refused if replayed, through another. Uses the rate limiter's connection; while it is
 * unavailable, this instance's memory (so a replay through another instance may then be billed).
 */
export class RedisServeTokenStates implements ServeTokenStates {
  private readonly fallback = new MemoryServeTokenStates();

  constructor(private readonly redis: RedisRateLimiter) {}

  claimImpression(id: string, now: number, at: number): boolean | Promise<boolean> {
    return this.run(CLAIM_IMPRESSION_SCRIPT, id, [String(SERVE_TOKEN_STATE_MS), String(at)], {
      shared: (answer) => Number(answer) === 1,
      local: () => this.fallback.claimImpression(id, now, at),
    });
  }

  settleImpression(id: string, outcome: number | 'unbillable' | 'release'): void | Promise<void> {
    const value = outcome === 'release' ? '' : outcome === 'unbillable' ? 'x' : String(outcome);
    return this.run(SETTLE_IMPRESSION_SCRIPT, id, [value], {
      shared: () => undefined,
      local: () => this.fallback.settleImpression(id, outcome),
    });
  }

  claimClick(id: string, at: number): TokenClick | Promise<TokenClick> {
    const args = [String(at - CLICK_WINDOW_MS), String(at), String(DOUBLE_CLICK_WINDOW_MS)];
    return this.run(CLAIM_CLICK_SCRIPT, id, args, {
      shared: (answer) => {
        const found = Number(answer);
        return found === -1
          ? 'none'
          : found === -2
            ? 'late'
            : found === -3
              ? 'clicked'
              : found === -4
                ? 'double'
                : found;
      },
      local: () => this.fallback.claimClick(id, at),
    });
  }

  releaseClick(id: string): void | Promise<void> {
    return this.run(RELEASE_CLICK_SCRIPT, id, [], {
      shared: () => undefined,
      local: () => this.fallback.releaseClick(id),
    });
  }

  private run<T>(
    script: string,
    id: string,
    args: string[],
    on: { shared: (answer: unknown) => T; local: () => T },
  ): T | Promise<T> {
    const key = `${this.redis.keyPrefix}servetoken:${id}`;
    const shared = this.redis.evaluate(script, SHAS.get(script) as string, key, args);
    if (shared === undefined) return on.local();
    return shared.then(on.shared, on.local);
  }
}
