import { createHash } from 'node:crypto';
import { frequencyCapReached, PERIOD_MS, type FrequencyCap } from '../domain/frequency-caps.js';
import { LARGEST_BLOCK, NumberSlab, SMALLEST_BLOCK } from './number-slab.js';
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
 * What memory keeps of one viewer: a block of numbers in the store's `NumberSlab`, outside the
 * JavaScript heap, however many campaigns it was shown, so a fetch reads and changes it without
 * allocating, and the collector has nothing of it to copy or trace (the map of viewers holds each
 * block's address, an integer). A block doubles when full and never shrinks while its viewer is
 * remembered, so a viewer moves a few times in its life, not on every change.
 *
 * In a viewer's block (`c` its chunk, `b` where it begins): `[UNTIL]` is when the last entry stops
 * counting (the viewer is forgotten then), `[NEXT_EXPIRY]` when the first does (the entries are
 * compacted then), `[USED]` 1 when the viewer was changed since the bound last passed it by
 * (`MemoryViewerFrequency.forgetOne`), `[END]` the index after the last entry, `[ROOM]` the
 * block's size. From `FIRST`, triples of (campaign id, time, until), grouped by campaign in
 * ascending order of id: a billed impression, or an answer held when the id is negated (ids are
 * positive). `until` is when the entry stops counting: its time plus the campaign's longest cap
 * window for an impression, plus `HOLD_MS` for a held answer. Indexes are from `b`.
 */
const UNTIL = 0;
const NEXT_EXPIRY = 1;
const USED = 2;
const END = 3;
const ROOM = 4;
const FIRST = 5;

/** Numbers per entry. */
const STRIDE = 3;

/** The first entry of `campaignId`'s group (entries are kept grouped by campaign, ids ascending). */
function groupStart(c: Float64Array, b: number, campaignId: number): number {
  const end = c[b + END] as number;
  let i = FIRST;
  while (i < end && Math.abs(c[b + i] as number) < campaignId) i += STRIDE;
  return i;
}

/** The entry after the group that begins at `start`. */
function groupEnd(c: Float64Array, b: number, start: number): number {
  const end = c[b + END] as number;
  const campaignId = Math.abs(c[b + start] as number);
  let i = start;
  while (i < end && Math.abs(c[b + i] as number) === campaignId) i += STRIDE;
  return i;
}

/**
 * Whether one more impression at `at` of the campaign whose entries are `[start, end)` would take
 * the viewer past one of `caps`, counting its billed impressions (those after `at` too: a backlog
 * sent late is judged against everything around it) and its answers held that still count at
 * `at`. Counts in place.
 */
function groupReachesCap(
  c: Float64Array,
  b: number,
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
    for (let i = b + start; i < b + end; i += STRIDE)
      if ((c[i + 1] as number) > since && ((c[i] as number) > 0 || (c[i + 2] as number) > at)) inWindow++;
    if (inWindow >= cap.impressions) return true;
  }
  return false;
}

/** `groupReachesCap` for the campaign's group, wherever it is. */
function reachesCap(
  c: Float64Array,
  b: number,
  campaignId: number,
  caps: readonly FrequencyCap[],
  at: number,
): boolean {
  const start = groupStart(c, b, campaignId);
  return start < (c[b + END] as number) && Math.abs(c[b + start] as number) === campaignId
    ? groupReachesCap(c, b, start, groupEnd(c, b, start), caps, at)
    : false;
}

/** Removes the entries that stopped counting by `now`, in place; returns the next to stop. */
function compact(c: Float64Array, b: number, now: number): number {
  const end = c[b + END] as number;
  let kept = FIRST;
  let next = Infinity;
  for (let i = FIRST; i < end; i += STRIDE) {
    const until = c[b + i + 2] as number;
    if (until <= now) continue;
    if (kept !== i) {
      c[b + kept] = c[b + i] as number;
      c[b + kept + 1] = c[b + i + 1] as number;
      c[b + kept + 2] = until;
    }
    kept += STRIDE;
    next = Math.min(next, until);
  }
  c[b + END] = kept;
  return next;
}

/** Adds an entry at the end of its campaign's group; the block has room for it. */
function insert(c: Float64Array, b: number, id: number, time: number, until: number): void {
  const end = c[b + END] as number;
  const start = groupStart(c, b, Math.abs(id));
  const at = start < end && Math.abs(c[b + start] as number) === Math.abs(id) ? groupEnd(c, b, start) : start;
  // A memmove on a typed array (unlike `copyWithin` on an array of numbers, which took 4 µs a fetch).
  if (at < end) c.copyWithin(b + at + STRIDE, b + at, b + end);
  c[b + at] = id;
  c[b + at + 1] = time;
  c[b + at + 2] = until;
  c[b + END] = end + STRIDE;
  if (until > (c[b + UNTIL] as number)) c[b + UNTIL] = until;
  if (until < (c[b + NEXT_EXPIRY] as number)) c[b + NEXT_EXPIRY] = until;
}

/** Removes the entry at `i`. */
function removeEntry(c: Float64Array, b: number, i: number): void {
  const end = c[b + END] as number;
  c.copyWithin(b + i, b + i + STRIDE, b + end);
  c[b + END] = end - STRIDE;
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

/** No viewer: what `reached` read is forgotten. */
const NO_ADDRESS = -1;

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
  private readonly slab = new NumberSlab();
  /** Each viewer's block in `slab`. */
  private readonly viewers = new Map<string, number>();
  /** Where the sweep is in the map (a map's iterator survives changes to it). */
  private sweeper: IterableIterator<[string, number]> = this.viewers.entries();
  private sweptAt = -Infinity;
  /** The most viewers the map held since the sweep's pass began: what the pass must get through. */
  private passSize = 0;
  /**
   * The viewer `reached` last read, and when, until anything changes a viewer: fetch holds its
   * answer for the viewer straight after, in the same turn of the event loop.
   */
  private readViewer: string | undefined;
  private readAddress = NO_ADDRESS;
  private readAt = 0;
  private readReached: ReadonlySet<number> = NOTHING_REACHED;

  constructor(private readonly maxViewers = MAX_VIEWERS_IN_MEMORY) {}

  /** How many viewers are remembered now (for the memory measurement). */
  get size(): number {
    return this.viewers.size;
  }

  /** Bytes of the viewers' blocks, outside the heap (for the memory measurement). */
  get blockBytes(): number {
    return this.slab.numbersInUse * Float64Array.BYTES_PER_ELEMENT;
  }

  reached(viewer: string, capsOf: CapsOf, now: number): ReadonlySet<number> {
    const address = this.viewers.get(viewer);
    if (address === undefined) return NOTHING_REACHED;
    const c = this.slab.chunk(address);
    const b = this.slab.offset(address);
    const last = c[b + END] as number;
    let reached: Set<number> | undefined;
    for (let start = FIRST, end = FIRST; start < last; start = end) {
      end = groupEnd(c, b, start);
      const campaignId = Math.abs(c[b + start] as number);
      const caps = capsOf(campaignId);
      if (caps !== undefined && caps.length > 0 && groupReachesCap(c, b, start, end, caps, now))
        (reached ??= new Set()).add(campaignId);
    }
    this.readViewer = viewer;
    this.readAddress = address;
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
    let address = this.viewerToChange(viewer, now, unchanged ? this.readAddress : NO_ADDRESS);
    let refused: number[] | undefined;
    for (const { id, frequencyCaps } of campaigns) {
      if (frequencyCaps === null) continue;
      if (
        unchanged
          ? reached.has(id)
          : reachesCap(this.slab.chunk(address), this.slab.offset(address), id, frequencyCaps, now)
      )
        (refused ??= []).push(id);
      else address = this.add(viewer, address, -id, now, now + HOLD_MS);
    }
    return refused ?? NOTHING_REFUSED;
  }

  reserve(viewer: string, campaignId: number, caps: readonly FrequencyCap[], at: number): boolean {
    const address = this.viewerToChange(viewer, at, NO_ADDRESS);
    const c = this.slab.chunk(address);
    const b = this.slab.offset(address);
    // This impression takes the place of the oldest answer held for the campaign, if any.
    const end = c[b + END] as number;
    let oldestHold = -1;
    for (let i = FIRST; i < end; i += STRIDE) {
      if (c[b + i] !== -campaignId || (c[b + i + 2] as number) <= at) continue;
      if (oldestHold === -1 || (c[b + i + 1] as number) < (c[b + oldestHold + 1] as number)) oldestHold = i;
    }
    if (oldestHold !== -1) removeEntry(c, b, oldestHold);
    if (reachesCap(c, b, campaignId, caps, at)) return false;
    this.add(viewer, address, campaignId, at, at + longestWindow(caps));
    return true;
  }

  release(viewer: string, campaignId: number, at: number): void {
    this.forgetRead();
    const address = this.viewers.get(viewer);
    if (address === undefined) return;
    const c = this.slab.chunk(address);
    const b = this.slab.offset(address);
    const end = c[b + END] as number;
    for (let i = FIRST; i < end; i += STRIDE)
      if (c[b + i] === campaignId && c[b + i + 1] === at) {
        removeEntry(c, b, i);
        return;
      }
  }

  /**
   * Adds an entry to the viewer's block at `address`, moving the viewer to a block twice the size
   * when it is full; returns the viewer's block. A viewer whose block is the largest there is
   * (349,523 entries: a week of impressions of far more capped campaigns than any viewer is shown)
   * and full is given no more entries: it may then see a campaign more often than its cap, never less.
   */
  private add(viewer: string, address: number, id: number, time: number, until: number): number {
    let c = this.slab.chunk(address);
    let b = this.slab.offset(address);
    const room = c[b + ROOM] as number;
    const end = c[b + END] as number;
    let kept = address;
    if (end + STRIDE > room) {
      if (room >= LARGEST_BLOCK) return address;
      kept = this.slab.allocate(room * 2);
      const to = this.slab.chunk(kept);
      const from = this.slab.offset(kept);
      // Number by number: `subarray` would make an object on the heap for every move.
      for (let i = 0; i < end; i++) to[from + i] = c[b + i] as number;
      to[from + ROOM] = room * 2;
      this.slab.free(address, room);
      this.viewers.set(viewer, kept);
      c = to;
      b = from;
    }
    insert(c, b, id, time, until);
    return kept;
  }

  /**
   * The viewer's block, marked used, created if new, with the entries that stopped counting by
   * `now` removed. `read`: its block as `reached` just read it, not looked up again.
   */
  private viewerToChange(viewer: string, now: number, read: number): number {
    this.forgetRead();
    this.sweep(now, read);
    const known = read !== NO_ADDRESS ? read : this.viewers.get(viewer);
    if (known === undefined) {
      if (this.viewers.size >= this.maxViewers) this.forgetOne();
      const address = this.slab.allocate(SMALLEST_BLOCK);
      const c = this.slab.chunk(address);
      const b = this.slab.offset(address);
      c[b + UNTIL] = now;
      c[b + NEXT_EXPIRY] = Infinity;
      c[b + USED] = 0;
      c[b + END] = FIRST;
      c[b + ROOM] = SMALLEST_BLOCK;
      this.viewers.set(viewer, address);
      return address;
    }
    const c = this.slab.chunk(known);
    const b = this.slab.offset(known);
    c[b + USED] = 1;
    if ((c[b + NEXT_EXPIRY] as number) <= now) c[b + NEXT_EXPIRY] = compact(c, b, now);
    return known;
  }

  /** Forgets what `reached` last read: something is about to change. */
  private forgetRead(): void {
    this.readViewer = undefined;
    this.readAddress = NO_ADDRESS;
    this.readReached = NOTHING_REACHED;
  }

  /** Forgets the viewer whose block is at `address`, giving the block back. */
  private forget(viewer: string, address: number): void {
    this.viewers.delete(viewer);
    this.slab.free(address, this.slab.chunk(address)[this.slab.offset(address) + ROOM] as number);
  }

  /** Forgets the oldest viewer not used since this last passed it; the used ones it passes go last. */
  private forgetOne(): void {
    for (const [viewer, address] of this.viewers) {
      const c = this.slab.chunk(address);
      const used = this.slab.offset(address) + USED;
      if (c[used] === 0) {
        this.forget(viewer, address);
        return;
      }
      c[used] = 0;
      this.viewers.delete(viewer);
      this.viewers.set(viewer, address);
    }
  }

  /**
   * Once a second, forgets the viewers whose entries have all stopped counting among the next
   * sixtieth of the map, but the one whose block is at `keep` (about to change).
   */
  private sweep(now: number, keep: number): void {
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
      const [viewer, address] = next.value;
      if ((this.slab.chunk(address)[this.slab.offset(address) + UNTIL] as number) <= now && address !== keep)
        this.forget(viewer, address);
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
