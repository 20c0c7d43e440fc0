import { createHash } from 'node:crypto';
import { frequencyCapReached, PERIOD_MS, type FrequencyCap } from '../domain/frequency-caps.js';
import type { RedisRateLimiter } from './redis-limiter.js';

/** A campaign's frequency caps, as the serving index has them; undefined or empty when it has none. */
export type CapsOf = (campaignId: number) => readonly FrequencyCap[] | undefined;

/**
 * The billable impressions each viewer (a partner's keyed viewer hash, `domain/viewer-keys.ts`) was
 * shown of each frequency-capped campaign (D20), kept only as long as the campaign's longest cap
 * window. In this instance's memory by default; in Redis, shared by every instance, when
 * `PLACARD_REDIS_URL` is set (falling back to memory while Redis is unreachable, like the limiter).
 */
export interface ViewerFrequency {
  /** The campaigns whose caps the viewer has reached at `now`: fetch leaves them out. */
  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> | Promise<ReadonlySet<number>>;
  /**
   * Judges an impression of the campaign shown to the viewer at `at`: false when it would pass one
   * of `caps` (it is not billed); otherwise true, and the impression is remembered at once, so a
   * second one sent before the first is stored is judged against it.
   */
  reserve(
    viewer: string,
    campaignId: number,
    caps: readonly FrequencyCap[],
    at: number,
  ): boolean | Promise<boolean>;
  /** Forgets an impression `reserve` remembered that the store then did not keep as billable. */
  release(viewer: string, campaignId: number, at: number): void | Promise<void>;
}

const NOTHING_REACHED: ReadonlySet<number> = new Set();

/** How long a viewer's impressions of a campaign matter: its longest cap's window. */
const longestWindow = (caps: readonly FrequencyCap[]): number =>
  caps.reduce((longest, cap) => Math.max(longest, PERIOD_MS[cap.per]), 0);

/** What memory keeps of one viewer. */
interface ViewerTimes {
  /** When the last of its times stops mattering: it is forgotten then. */
  until: number;
  byCampaign: Map<number, number[]>;
}

/** Viewers kept in memory at most (about 200 bytes each with one campaign; docs/product-rules.md). */
export const MAX_VIEWERS_IN_MEMORY = 1_000_000;

/** How often the memory forgets the viewers whose times have all stopped mattering. */
const SWEEP_MS = 60_000;

/** The default: this instance's memory, bounded by `MAX_VIEWERS_IN_MEMORY` (the least recent go). */
export class MemoryViewerFrequency implements ViewerFrequency {
  private readonly viewers = new Map<string, ViewerTimes>();
  private sweptAt = 0;

  constructor(private readonly maxViewers = MAX_VIEWERS_IN_MEMORY) {}

  /** How many viewers are remembered now (for the memory measurement). */
  get size(): number {
    return this.viewers.size;
  }

  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> {
    const kept = this.viewers.get(viewer);
    if (kept === undefined) return NOTHING_REACHED;
    let reached: Set<number> | undefined;
    for (const [campaignId, times] of kept.byCampaign) {
      const caps = capsOf(campaignId);
      if (caps !== undefined && caps.length > 0 && frequencyCapReached(times, caps, now))
        (reached ??= new Set()).add(campaignId);
    }
    return reached ?? NOTHING_REACHED;
  }

  reserve(viewer: string, campaignId: number, caps: readonly FrequencyCap[], at: number): boolean {
    this.sweep(at);
    const window = longestWindow(caps);
    let kept = this.viewers.get(viewer);
    const times = (kept?.byCampaign.get(campaignId) ?? []).filter((time) => time > at - window);
    if (frequencyCapReached(times, caps, at)) return false;
    times.push(at);
    if (kept === undefined) {
      kept = { until: 0, byCampaign: new Map() };
      if (this.viewers.size >= this.maxViewers) this.forgetOldest();
    } else this.viewers.delete(viewer); // re-inserted below: the map's order is recency
    kept.byCampaign.set(campaignId, times);
    kept.until = Math.max(kept.until, at + window);
    this.viewers.set(viewer, kept);
    return true;
  }

  release(viewer: string, campaignId: number, at: number): void {
    const times = this.viewers.get(viewer)?.byCampaign.get(campaignId);
    const found = times ? times.indexOf(at) : -1;
    if (times && found !== -1) times.splice(found, 1);
  }

  private forgetOldest(): void {
    const oldest = this.viewers.keys().next();
    if (oldest.done !== true) this.viewers.delete(oldest.value);
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_MS) return;
    this.sweptAt = now;
    for (const [viewer, { until }] of this.viewers) if (until <= now) this.viewers.delete(viewer);
  }
}

/** Every campaign's times for the viewer: a flat array of field, value, field, value… */
const READ_SCRIPT = `return redis.call('HGETALL', KEYS[1])`;
/**
 * ARGV[1] the campaign, ARGV[2] the impression's time, ARGV[3] the longest window, then pairs of
 * (window, impressions) for each cap. Keeps the campaign's times within the longest window; 0 if
 * one more would pass a cap, else appends it and returns 1. The key lives as long as its longest
 * window from its latest impression.
 */
const RESERVE_SCRIPT = `
local at = tonumber(ARGV[2])
local longest = tonumber(ARGV[3])
local kept = {}
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value then
  for time in string.gmatch(value, '[^,]+') do
    if tonumber(time) > at - longest then table.insert(kept, time) end
  end
end
for i = 4, #ARGV, 2 do
  local since = at - tonumber(ARGV[i])
  local count = 0
  for _, time in ipairs(kept) do
    if tonumber(time) > since then count = count + 1 end
  end
  if count >= tonumber(ARGV[i + 1]) then return 0 end
end
table.insert(kept, ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], table.concat(kept, ','))
if redis.call('PTTL', KEYS[1]) < longest then redis.call('PEXPIRE', KEYS[1], longest) end
return 1
`;
/** Removes one time ARGV[2] from the campaign ARGV[1]'s times, if it is there. */
const RELEASE_SCRIPT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local kept = {}
local removed = false
for time in string.gmatch(value, '[^,]+') do
  if not removed and time == ARGV[2] then removed = true else table.insert(kept, time) end
end
if #kept == 0 then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], table.concat(kept, ',')) end
return 1
`;
const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const READ_SHA = sha(READ_SCRIPT);
const RESERVE_SHA = sha(RESERVE_SCRIPT);
const RELEASE_SHA = sha(RELEASE_SCRIPT);

/**
 * Viewers' impressions in Redis, one hash per viewer (a field per campaign), so a cap holds however
 * many instances serve. Uses the rate limiter's connection; while it is unavailable, this
 * instance's memory (a viewer may then see a campaign more often than its cap, never less).
 */
export class RedisViewerFrequency implements ViewerFrequency {
  private readonly fallback = new MemoryViewerFrequency();

  constructor(private readonly redis: RedisRateLimiter) {}

  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> | Promise<ReadonlySet<number>> {
    const shared = this.redis.evaluate(READ_SCRIPT, READ_SHA, this.key(viewer), []);
    if (shared === undefined) return this.fallback.reached(viewer, capsOf, now);
    return shared.then(
      (answer) => {
        const fields = Array.isArray(answer) ? (answer as unknown[]).map(String) : [];
        let reached: Set<number> | undefined;
        for (let i = 0; i + 1 < fields.length; i += 2) {
          const campaignId = Number(fields[i]);
          const caps = capsOf(campaignId);
          const times = (fields[i + 1] as string).split(',').map(Number);
          if (caps !== undefined && caps.length > 0 && frequencyCapReached(times, caps, now))
            (reached ??= new Set()).add(campaignId);
        }
        return reached ?? NOTHING_REACHED;
      },
      () => this.fallback.reached(viewer, capsOf, now),
    );
  }

  reserve(
    viewer: string,
    campaignId: number,
    caps: readonly FrequencyCap[],
    at: number,
  ): boolean | Promise<boolean> {
    const args = [String(campaignId), String(at), String(longestWindow(caps))];
    for (const cap of caps) args.push(String(PERIOD_MS[cap.per]), String(cap.impressions));
    const shared = this.redis.evaluate(RESERVE_SCRIPT, RESERVE_SHA, this.key(viewer), args);
    if (shared === undefined) return this.fallback.reserve(viewer, campaignId, caps, at);
    return shared.then(
      (answer) => Number(answer) === 1,
      () => this.fallback.reserve(viewer, campaignId, caps, at),
    );
  }

  release(viewer: string, campaignId: number, at: number): void | Promise<void> {
    const args = [String(campaignId), String(at)];
    const shared = this.redis.evaluate(RELEASE_SCRIPT, RELEASE_SHA, this.key(viewer), args);
    if (shared === undefined) return this.fallback.release(viewer, campaignId, at);
    return shared.then(
      () => undefined,
      () => this.fallback.release(viewer, campaignId, at),
    );
  }

  private key(viewer: string): string {
    return `${this.redis.keyPrefix}viewer:${viewer}`;
  }
}
