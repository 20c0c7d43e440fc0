import { createHash } from 'node:crypto';
import { frequencyCapReached, PERIOD_MS, type FrequencyCap } from '../domain/frequency-caps.js';
import type { RedisRateLimiter } from './redis-limiter.js';

/** A campaign a fetch answers a viewer with, and its caps (a served campaign is one). */
export interface HeldCampaign {
  id: number;
  frequencyCaps: readonly FrequencyCap[] | null;
}

/** A campaign's frequency caps, as the serving index has them; undefined or empty when it has none. */
export type CapsOf = (campaignId: number) => readonly FrequencyCap[] | undefined;

/**
 * The billable impressions each viewer (a partner's keyed viewer hash, `domain/viewer-keys.ts`) was
 * shown of each frequency-capped campaign (D20), kept only as long as the campaign's longest cap
 * window, and the answers fetch gave the viewer that no impression has been reported for yet (held
 * for `HOLD_MS`). In this instance's memory by default; in Redis, shared by every instance, when
 * `PLACARD_REDIS_URL` is set (falling back to memory while Redis is unreachable, like the limiter).
 */
export interface ViewerFrequency {
  /**
   * The campaigns whose caps the viewer has reached at `now`, counting the answers held: fetch
   * leaves them out.
   */
  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> | Promise<ReadonlySet<number>>;
  /**
   * Holds a fetch's answer of capped campaigns for the viewer at `now`: each counts toward the
   * campaign's caps until its impression is reported or `HOLD_MS` passes, so a second page view
   * fetching at the same moment (another tab, perhaps through another instance) is not given what
   * the first will show. Checks and holds each campaign at once: returns the ids it did not hold
   * because the viewer reached a cap meanwhile (counting the other holds). Each campaign once.
   */
  hold(
    viewer: string,
    campaigns: readonly HeldCampaign[],
    now: number,
  ): readonly number[] | Promise<readonly number[]>;
  /**
   * Judges an impression of the campaign shown to the viewer at `at`, taking the place of one held
   * answer if there is one: false when it would pass one of `caps` (it is not billed); otherwise
   * true, and the impression is remembered at once, so a second one sent before the first is
   * stored is judged against it.
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

/**
 * How long a fetch's answer counts toward a viewer's caps before its impression arrives: a page
 * reports its ads' impressions within seconds of fetching them; one never reported stops counting.
 */
export const HOLD_MS = 60_000;

const NOTHING_REACHED: ReadonlySet<number> = new Set();
const NOTHING_REFUSED: readonly number[] = Object.freeze([]);

/** How long a viewer's impressions of a campaign matter: its longest cap's window. */
const longestWindow = (caps: readonly FrequencyCap[]): number =>
  caps.reduce((longest, cap) => Math.max(longest, PERIOD_MS[cap.per]), 0);

/**
 * What memory keeps of one viewer: one array of numbers (V8 keeps it as one block of doubles),
 * however many campaigns it was shown, so a fetch reads and changes it without allocating, and the
 * collector has one object per viewer to trace (a fetch for a viewer runs at the rate of fetches,
 * and 100,000 viewers' worth of small objects per campaign kept it busy).
 *
 * `[UNTIL]` is when the last entry stops counting (the viewer is forgotten then), `[NEXT_EXPIRY]`
 * when the first does (the entries are compacted then), `[USED]` 1 when the viewer was changed
 * since the bound last passed it by (`MemoryViewerFrequency.forgetOne`). From `FIRST`, triples of (campaign id,
 * time, until), grouped by campaign in ascending order of id: a billed impression, or an answer held
 * when the id is negated (ids are positive). `until` is when the entry stops counting: its time plus
 * the campaign's longest cap window for an impression, plus `HOLD_MS` for a held answer.
 */
type ViewerEntries = number[];
const UNTIL = 0;
const NEXT_EXPIRY = 1;
const USED = 2;
const FIRST = 3;

/** Numbers per entry. */
const STRIDE = 3;

/** The first entry of `campaignId`'s group (entries are kept grouped by campaign, ids ascending). */
function groupStart(entries: readonly number[], campaignId: number): number {
  let i = FIRST;
  while (i < entries.length && Math.abs(entries[i] as number) < campaignId) i += STRIDE;
  return i;
}

/** The entry after the group that begins at `start`. */
function groupEnd(entries: readonly number[], start: number): number {
  const campaignId = Math.abs(entries[start] as number);
  let i = start;
  while (i < entries.length && Math.abs(entries[i] as number) === campaignId) i += STRIDE;
  return i;
}

/**
 * Whether one more impression at `at` of the campaign whose entries are `entries[start..end)` would
 * take the viewer past one of `caps`, counting its billed impressions (those after `at` too: a
 * backlog sent late is judged against everything around it) and its answers held that still count
 * at `at`. Counts in place.
 */
function groupReachesCap(
  entries: readonly number[],
  start: number,
  end: number,
  caps: readonly FrequencyCap[],
  at: number,
): boolean {
  // Written out rather than through `capReachedBy`: its counting closure, made for every group of
  // every viewer a fetch looks at, was most of what the collector had to do for capped fetches.
  for (const cap of caps) {
    const since = at - PERIOD_MS[cap.per];
    let inWindow = 0;
    for (let i = start; i < end; i += STRIDE)
      if (
        (entries[i + 1] as number) > since &&
        ((entries[i] as number) > 0 || (entries[i + 2] as number) > at)
      )
        inWindow++;
    if (inWindow >= cap.impressions) return true;
  }
  return false;
}

/** `groupReachesCap` for the campaign's group, wherever it is. */
function reachesCap(
  entries: readonly number[],
  campaignId: number,
  caps: readonly FrequencyCap[],
  at: number,
): boolean {
  const start = groupStart(entries, campaignId);
  return start < entries.length && Math.abs(entries[start] as number) === campaignId
    ? groupReachesCap(entries, start, groupEnd(entries, start), caps, at)
    : false;
}

/** Removes the entries that stopped counting by `now`, in place; returns the next to stop. */
function compact(entries: number[], now: number): number {
  let kept = FIRST;
  let next = Infinity;
  for (let i = FIRST; i < entries.length; i += STRIDE) {
    const until = entries[i + 2] as number;
    if (until <= now) continue;
    if (kept !== i) {
      entries[kept] = entries[i] as number;
      entries[kept + 1] = entries[i + 1] as number;
      entries[kept + 2] = until;
    }
    kept += STRIDE;
    next = Math.min(next, until);
  }
  entries.length = kept;
  return next;
}

/** Adds an entry at the end of its campaign's group. */
function add(entries: ViewerEntries, id: number, time: number, until: number): void {
  const start = groupStart(entries, Math.abs(id));
  const at =
    start < entries.length && Math.abs(entries[start] as number) === Math.abs(id)
      ? groupEnd(entries, start)
      : start;
  // Moved along by hand: `splice` makes an array of what it removed (none) on every call, and
  // `copyWithin` is no fast path for an array of numbers (it took 4 µs a fetch).
  const length = entries.length;
  entries.push(id, time, until);
  if (at < length) {
    for (let i = length - 1; i >= at; i--) entries[i + STRIDE] = entries[i] as number;
    entries[at] = id;
    entries[at + 1] = time;
    entries[at + 2] = until;
  }
  if (until > (entries[UNTIL] as number)) entries[UNTIL] = until;
  if (until < (entries[NEXT_EXPIRY] as number)) entries[NEXT_EXPIRY] = until;
}

/** Removes the entry at `i` (without `splice`'s array of what it removed). */
function removeEntry(entries: ViewerEntries, i: number): void {
  for (let j = i + STRIDE; j < entries.length; j++) entries[j - STRIDE] = entries[j] as number;
  entries.length -= STRIDE;
}

/** Viewers kept in memory at most (docs/product-rules.md gives the bytes each takes). */
export const MAX_VIEWERS_IN_MEMORY = 250_000;

/**
 * The sweep runs at most once a second of changes, over a sixtieth of the viewers (at least
 * `SWEEP_AT_LEAST` of them): each viewer is looked at about once a minute, so one whose entries all
 * stopped counting is forgotten within a minute or so of that. Looking at two viewers on every
 * change instead cost each fetch about 0.5 µs, mostly in cache misses.
 */
const SWEEP_EVERY_MS = 1_000;
const SWEEPS_PER_PASS = 60;
const SWEEP_AT_LEAST = 64;

/**
 * The default: this instance's memory, bounded by `MAX_VIEWERS_IN_MEMORY`.
 *
 * The map of viewers is never reordered as viewers are used: deleting and re-adding a key on every
 * fetch (a strict least-recently-used order) leaves the map's table full of deleted slots, and
 * V8 then rebuilds it whole, a pause of about 12 ms at 100,000 viewers every few seconds of
 * traffic, which every request waiting meanwhile pays. Instead, viewers whose entries all stopped
 * counting are swept a sixtieth of the map at a time, once a second, as others change, and past
 * the bound the oldest viewer not used since the bound last passed it by is forgotten (the "clock"
 * approximation of least recently used: a used one is marked, and moved to the end once, when the
 * bound reaches it).
 */
export class MemoryViewerFrequency implements ViewerFrequency {
  private readonly viewers = new Map<string, ViewerEntries>();
  /** Where the sweep is in the map (a map's iterator survives changes to it). */
  private sweeper: IterableIterator<[string, ViewerEntries]> = this.viewers.entries();
  private sweptAt = -Infinity;
  /** The most viewers the map held since the sweep's pass began: what the pass must get through. */
  private passSize = 0;
  /**
   * The viewer `reached` last read, and when, until anything changes a viewer: fetch holds its
   * answer for the viewer straight after, in the same turn of the event loop.
   */
  private readViewer: string | undefined;
  private readEntries: ViewerEntries = [];
  private readAt = 0;
  private readReached: ReadonlySet<number> = NOTHING_REACHED;

  constructor(private readonly maxViewers = MAX_VIEWERS_IN_MEMORY) {}

  /** How many viewers are remembered now (for the memory measurement). */
  get size(): number {
    return this.viewers.size;
  }

  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> {
    const entries = this.viewers.get(viewer);
    if (entries === undefined) return NOTHING_REACHED;
    let reached: Set<number> | undefined;
    for (let start = FIRST, end = FIRST; start < entries.length; start = end) {
      end = groupEnd(entries, start);
      const campaignId = Math.abs(entries[start] as number);
      const caps = capsOf(campaignId);
      if (caps !== undefined && caps.length > 0 && groupReachesCap(entries, start, end, caps, now))
        (reached ??= new Set()).add(campaignId);
    }
    this.readViewer = viewer;
    this.readEntries = entries;
    this.readAt = now;
    this.readReached = reached ?? NOTHING_REACHED;
    return this.readReached;
  }

  hold(viewer: string, campaigns: readonly HeldCampaign[], now: number): readonly number[] {
    if (campaigns.length === 0) return NOTHING_REFUSED;
    // Fetch holds its answer straight after `reached` read the viewer at this same moment: when no
    // change came between (each change forgets what it read), what `reached` found is the answer
    // for every campaign, so the viewer's entries need neither looking up again nor counting twice.
    const unchanged = this.readViewer === viewer && this.readAt === now;
    const reached = this.readReached;
    const entries = this.viewerToChange(viewer, now, unchanged ? this.readEntries : undefined);
    let refused: number[] | undefined;
    for (const { id, frequencyCaps } of campaigns) {
      if (frequencyCaps === null) continue;
      if (unchanged ? reached.has(id) : reachesCap(entries, id, frequencyCaps, now))
        (refused ??= []).push(id);
      else add(entries, -id, now, now + HOLD_MS);
    }
    return refused ?? NOTHING_REFUSED;
  }

  reserve(viewer: string, campaignId: number, caps: readonly FrequencyCap[], at: number): boolean {
    const entries = this.viewerToChange(viewer, at);
    // This impression takes the place of the oldest answer held for the campaign, if any.
    let oldestHold = -1;
    for (let i = FIRST; i < entries.length; i += STRIDE) {
      if (entries[i] !== -campaignId || (entries[i + 2] as number) <= at) continue;
      if (oldestHold === -1 || (entries[i + 1] as number) < (entries[oldestHold + 1] as number))
        oldestHold = i;
    }
    if (oldestHold !== -1) removeEntry(entries, oldestHold);
    if (reachesCap(entries, campaignId, caps, at)) return false;
    add(entries, campaignId, at, at + longestWindow(caps));
    return true;
  }

  release(viewer: string, campaignId: number, at: number): void {
    this.forgetRead();
    const entries = this.viewers.get(viewer);
    if (entries === undefined) return;
    for (let i = FIRST; i < entries.length; i += STRIDE)
      if (entries[i] === campaignId && entries[i + 1] === at) {
        removeEntry(entries, i);
        return;
      }
  }

  /**
   * The viewer's entries, marked used, created if new, with the entries that stopped counting by
   * `now` removed. `read`: its entries as `reached` just read them, not looked up again.
   */
  private viewerToChange(viewer: string, now: number, read?: ViewerEntries): ViewerEntries {
    this.forgetRead();
    this.sweep(now, read);
    let kept = read ?? this.viewers.get(viewer);
    if (kept === undefined) {
      if (this.viewers.size >= this.maxViewers) this.forgetOne();
      kept = [now, Infinity, 0];
      this.viewers.set(viewer, kept);
    } else {
      kept[USED] = 1;
      if ((kept[NEXT_EXPIRY] as number) <= now) kept[NEXT_EXPIRY] = compact(kept, now);
    }
    return kept;
  }

  /** Forgets what `reached` last read: something is about to change. */
  private forgetRead(): void {
    this.readViewer = undefined;
    this.readEntries = [];
    this.readReached = NOTHING_REACHED;
  }

  /** Forgets the oldest viewer not used since this last passed it; the used ones it passes go last. */
  private forgetOne(): void {
    for (const [viewer, entries] of this.viewers) {
      this.viewers.delete(viewer);
      if (entries[USED] === 0) return;
      entries[USED] = 0;
      this.viewers.set(viewer, entries);
    }
  }

  /**
   * Once a second, forgets the viewers whose entries have all stopped counting among the next
   * sixtieth of the map, but the one whose entries are `keep` (about to change).
   */
  private sweep(now: number, keep?: ViewerEntries): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    this.passSize = Math.max(this.passSize, this.viewers.size);
    const steps = Math.max(SWEEP_AT_LEAST, Math.ceil(this.passSize / SWEEPS_PER_PASS));
    for (let step = 0; step < steps; step++) {
      let next = this.sweeper.next();
      if (next.done === true) {
        this.passSize = this.viewers.size;
        if (step >= this.passSize) return; // the whole map, already looked at in this sweep
        this.sweeper = this.viewers.entries();
        next = this.sweeper.next();
        if (next.done === true) return;
      }
      const [viewer, entries] = next.value;
      if ((entries[UNTIL] as number) <= now && entries !== keep) this.viewers.delete(viewer);
    }
  }
}

/**
 * In Redis a viewer is one hash, a field per campaign whose value lists its billed impressions'
 * times and its held answers' times, the latter marked `h`: `1764324000000,h1764324060000`.
 */
const READ_SCRIPT = `return redis.call('HGETALL', KEYS[1])`;
/**
 * ARGV[1] the campaign, ARGV[2] the impression's time, ARGV[3] the longest window, ARGV[4]
 * `HOLD_MS`, then pairs of (window, impressions) for each cap. Keeps the billed times within the
 * longest window and the live holds, less the oldest hold (this impression takes its place); 0 if
 * one more would pass a cap, else appends the time and returns 1. The key lives as long as its
 * longest window from its latest impression.
 */
const RESERVE_SCRIPT = `
local at = tonumber(ARGV[2])
local longest = tonumber(ARGV[3])
local holdFrom = at - tonumber(ARGV[4])
local times, held = {}, {}
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value then
  for item in string.gmatch(value, '[^,]+') do
    if string.sub(item, 1, 1) == 'h' then
      if tonumber(string.sub(item, 2)) > holdFrom then table.insert(held, item) end
    elseif tonumber(item) > at - longest then table.insert(times, item) end
  end
end
if #held > 0 then table.remove(held, 1) end
local function save(added)
  local all = {}
  for _, time in ipairs(times) do table.insert(all, time) end
  if added then table.insert(all, added) end
  for _, hold in ipairs(held) do table.insert(all, hold) end
  if #all == 0 then redis.call('HDEL', KEYS[1], ARGV[1])
  else redis.call('HSET', KEYS[1], ARGV[1], table.concat(all, ',')) end
end
for i = 5, #ARGV, 2 do
  local since = at - tonumber(ARGV[i])
  local count = 0
  for _, time in ipairs(times) do
    if tonumber(time) > since then count = count + 1 end
  end
  for _, hold in ipairs(held) do
    if tonumber(string.sub(hold, 2)) > since then count = count + 1 end
  end
  if count >= tonumber(ARGV[i + 1]) then
    save(nil)
    return 0
  end
end
save(ARGV[2])
if redis.call('PTTL', KEYS[1]) < longest then redis.call('PEXPIRE', KEYS[1], longest) end
return 1
`;
/**
 * ARGV[1] the fetch's time, ARGV[2] `HOLD_MS`, then each campaign answered as
 * `id:window:impressions[:window:impressions…]`. For each, drops its dead holds, then holds it unless
 * its billed times and live holds reach a cap already. Returns the ids it did not hold.
 */
const HOLD_SCRIPT = `
local now = tonumber(ARGV[1])
local holdFrom = now - tonumber(ARGV[2])
local refused = {}
for i = 3, #ARGV do
  local parts = {}
  for part in string.gmatch(ARGV[i], '[^:]+') do table.insert(parts, part) end
  local id = parts[1]
  local kept, counted = {}, {}
  local value = redis.call('HGET', KEYS[1], id)
  if value then
    for item in string.gmatch(value, '[^,]+') do
      if string.sub(item, 1, 1) ~= 'h' then
        table.insert(kept, item)
        table.insert(counted, tonumber(item))
      elseif tonumber(string.sub(item, 2)) > holdFrom then
        table.insert(kept, item)
        table.insert(counted, tonumber(string.sub(item, 2)))
      end
    end
  end
  local reached = false
  for j = 2, #parts, 2 do
    local since = now - tonumber(parts[j])
    local count = 0
    for _, time in ipairs(counted) do
      if time > since then count = count + 1 end
    end
    if count >= tonumber(parts[j + 1]) then reached = true end
  end
  if reached then table.insert(refused, id) else table.insert(kept, 'h' .. ARGV[1]) end
  if #kept > 0 then redis.call('HSET', KEYS[1], id, table.concat(kept, ',')) end
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return refused
`;
/** Removes one billed time ARGV[2] from the campaign ARGV[1]'s list, if it is there. */
const RELEASE_SCRIPT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local kept = {}
local removed = false
for item in string.gmatch(value, '[^,]+') do
  if not removed and item == ARGV[2] then removed = true else table.insert(kept, item) end
end
if #kept == 0 then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], table.concat(kept, ',')) end
return 1
`;
/** A Redis field's billed times, and its held answers' times while they count at `now`. */
function timesCounting(value: string, now: number): number[] {
  const times: number[] = [];
  for (const item of value.split(',')) {
    if (!item.startsWith('h')) times.push(Number(item));
    else if (Number(item.slice(1)) > now - HOLD_MS) times.push(Number(item.slice(1)));
  }
  return times;
}

const sha = (script: string): string => createHash('sha1').update(script).digest('hex');
const READ_SHA = sha(READ_SCRIPT);
const RESERVE_SHA = sha(RESERVE_SCRIPT);
const HOLD_SHA = sha(HOLD_SCRIPT);
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
          if (caps === undefined || caps.length === 0) continue;
          if (frequencyCapReached(timesCounting(fields[i + 1] as string, now), caps, now))
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
    const args = [String(campaignId), String(at), String(longestWindow(caps)), String(HOLD_MS)];
    for (const cap of caps) args.push(String(PERIOD_MS[cap.per]), String(cap.impressions));
    const shared = this.redis.evaluate(RESERVE_SCRIPT, RESERVE_SHA, this.key(viewer), args);
    if (shared === undefined) return this.fallback.reserve(viewer, campaignId, caps, at);
    return shared.then(
      (answer) => Number(answer) === 1,
      () => this.fallback.reserve(viewer, campaignId, caps, at),
    );
  }

  hold(
    viewer: string,
    campaigns: readonly HeldCampaign[],
    now: number,
  ): readonly number[] | Promise<readonly number[]> {
    if (campaigns.length === 0) return NOTHING_REFUSED;
    const args = [String(now), String(HOLD_MS)];
    for (const { id, frequencyCaps } of campaigns)
      if (frequencyCaps !== null)
        args.push([id, ...frequencyCaps.flatMap((cap) => [PERIOD_MS[cap.per], cap.impressions])].join(':'));
    const shared = this.redis.evaluate(HOLD_SCRIPT, HOLD_SHA, this.key(viewer), args);
    if (shared === undefined) return this.fallback.hold(viewer, campaigns, now);
    return shared.then(
      (refused) => (Array.isArray(refused) ? refused.map(Number) : []),
      () => this.fallback.hold(viewer, campaigns, now),
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
