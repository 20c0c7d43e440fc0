/**
 * Ordering of eligible campaigns (rule D4): higher priority first; inside one priority a
 * weighted lottery without replacement, so delivery rotates instead of always serving the same
 * campaigns. Everything here is precomputed once per index build so that a draw costs about
 * O(limit) memory reads instead of O(n) on the request path.
 */

export interface Weighted {
  readonly priority: number;
  readonly weight: number;
  /** Optional flight window (epoch ms); a group records the span in which all its items are in flight. */
  readonly startAt?: number | null;
  readonly endAt?: number | null;
  /** Runs only in some hours of the week (dayparting): a group holding one is never wholly in flight. */
  readonly scheduled?: boolean;
}

/** Campaigns of one priority, laid out for cheap weighted draws. */
export interface PriorityGroup<T extends Weighted> {
  readonly priority: number;
  readonly items: readonly T[];
  /** items[i].weight, packed, so a draw reads one small array instead of scattered objects. */
  readonly weights: Uint32Array;
  readonly total: number;
  readonly maxWeight: number;
  /**
   * Prefix sums of the weights, only for skewed groups (a few heavy items among many light ones),
   * where acceptance sampling would reject too often; there a draw is a binary search instead.
   */
  readonly cumulative: Float64Array | null;
  /** Every item is inside its flight window from `allInFlightFrom` (inclusive) to `allInFlightUntil`. */
  readonly allInFlightFrom: number;
  readonly allInFlightUntil: number;
}

/**
 * True when every item of a group is known to be eligible, so a draw need not look at the items
 * themselves: on a busy server those objects are rarely in the CPU cache, and reading a few dozen
 * of them per request cost more than the rest of the draw.
 */
export type GroupEligible<T extends Weighted> = (group: PriorityGroup<T>) => boolean;

const NO_GROUP_SHORTCUT = (): boolean => false;

export type Random = () => number;

/** Acceptance sampling is used while the heaviest item weighs at most this many times the average. */
const MAX_SKEW = 4;

/** Splits items into groups by priority, highest first (each group keeps the items' order). */
export function groupByPriority<T extends Weighted>(items: readonly T[]): PriorityGroup<T>[] {
  const byPriority = new Map<number, T[]>();
  for (const item of items) {
    const group = byPriority.get(item.priority);
    if (group) group.push(item);
    else byPriority.set(item.priority, [item]);
  }
  return [...byPriority.entries()]
    .sort(([a], [b]) => b - a)
    .map(([priority, members]) => makeGroup(priority, members));
}

/** One priority's group laid out for draws: packed weights, their sum and flight span. */
function makeGroup<T extends Weighted>(priority: number, members: readonly T[]): PriorityGroup<T> {
  const weights = Uint32Array.from(members, (member) => member.weight);
  let total = 0;
  let maxWeight = 0;
  for (const weight of weights) {
    total += weight;
    if (weight > maxWeight) maxWeight = weight;
  }
  let allInFlightFrom = -Infinity;
  let allInFlightUntil = Infinity;
  for (const { startAt, endAt, scheduled } of members) {
    if (startAt !== undefined && startAt !== null && startAt > allInFlightFrom) allInFlightFrom = startAt;
    if (endAt !== undefined && endAt !== null && endAt < allInFlightUntil) allInFlightUntil = endAt;
    // Whether it runs now is the hour's, which a span of time cannot say.
    if (scheduled === true) allInFlightUntil = -Infinity;
  }
  let cumulative: Float64Array | null = null;
  if (maxWeight * members.length > MAX_SKEW * total) {
    cumulative = new Float64Array(members.length);
    let sum = 0;
    weights.forEach((weight, i) => (cumulative![i] = sum += weight));
  }
  // slice(): an exact-size copy; arrays grown by push keep up to half again as spare capacity.
  return {
    priority,
    items: members.slice(),
    weights,
    total,
    maxWeight,
    cumulative,
    allInFlightFrom,
    allInFlightUntil,
  };
}

/**
 * Adds `item` to `groups` (a list sorted by priority, highest first) in place: only the group of its
 * priority is laid out again, at the position `before` gives among its items, so the list is the
 * one `groupByPriority` would make from the same items in that order.
 */
export function addToGroups<T extends Weighted>(
  groups: PriorityGroup<T>[],
  item: T,
  before: (a: T, b: T) => boolean,
): void {
  let at = 0;
  while (at < groups.length && (groups[at] as PriorityGroup<T>).priority > item.priority) at++;
  const group = groups[at];
  if (group === undefined || group.priority !== item.priority) {
    groups.splice(at, 0, makeGroup(item.priority, [item]));
    return;
  }
  const members = group.items.slice();
  let position = members.length;
  while (position > 0 && before(item, members[position - 1] as T)) position--;
  members.splice(position, 0, item);
  groups[at] = makeGroup(item.priority, members);
}

/** Removes `item` from `groups` in place (a group left empty goes); false if it was not there. */
export function removeFromGroups<T extends Weighted>(groups: PriorityGroup<T>[], item: T): boolean {
  const at = groups.findIndex((group) => group.priority === item.priority);
  const group = groups[at];
  if (group === undefined || !group.items.includes(item)) return false;
  if (group.items.length === 1) groups.splice(at, 1);
  else
    groups[at] = makeGroup(
      group.priority,
      group.items.filter((member) => member !== item),
    );
  return true;
}

/** One weighted draw from a large group: O(log n) on skewed groups, O(1) expected otherwise. */
function drawOne<T extends Weighted>(group: PriorityGroup<T>, point: number, random: Random): T | undefined {
  if (group.cumulative) return group.items[pickIndex(group.cumulative, point)];
  // Uniform pick, kept with probability weight / maxWeight: proportional to weight. A rejection
  // returns undefined and costs the caller one attempt.
  const index = Math.floor(random() * group.items.length);
  return random() * group.maxWeight < (group.weights[index] as number) ? group.items[index] : undefined;
}

function pickIndex(cumulative: Float64Array, target: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((cumulative[mid] as number) > target) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** True when `item` is among out[from..]: the items already drawn at the current priority. */
function drawnSince<T>(out: readonly T[], from: number, item: T): boolean {
  for (let i = from; i < out.length; i++) if (out[i] === item) return true;
  return false;
}

/**
 * Scratch space for sequential draws, reused by every call (requests are served one at a time on
 * one thread), so a draw allocates nothing and reads only packed weights and item pointers.
 */
const scratchItems: unknown[] = [];
let scratchWeights = new Float64Array(256);

function reserveScratch(size: number): void {
  if (size <= scratchWeights.length) return;
  const grown = new Float64Array(Math.max(size, scratchWeights.length * 2));
  grown.set(scratchWeights);
  scratchWeights = grown;
}

/**
 * Weighted order without replacement over a small set: repeated draws, each proportional to the
 * weight of what is left. Linear scans beat sorting and allocation for the tens of items a priority
 * level of one placement usually holds. Appends up to `need` items to `out`.
 */
function drawSequentially<T extends Weighted>(
  groups: readonly PriorityGroup<T>[],
  need: number,
  eligible: (item: T) => boolean,
  groupEligible: GroupEligible<T>,
  random: Random,
  out: T[],
  levelStart: number,
): void {
  let count = 0;
  let remaining = 0;
  const items = scratchItems as T[];
  for (const group of groups) {
    const checkEach = !groupEligible(group);
    const members = group.items;
    reserveScratch(count + members.length);
    for (let i = 0; i < members.length; i++) {
      const item = members[i] as T;
      if (checkEach && !eligible(item)) continue;
      if (levelStart < out.length && drawnSince(out, levelStart, item)) continue;
      const weight = group.weights[i] as number;
      items[count] = item;
      scratchWeights[count++] = weight;
      remaining += weight;
    }
  }
  const filled = count;
  for (let drawn = 0; drawn < need && count > 0; drawn++) {
    let target = random() * remaining;
    let index = 0;
    // Stop on the last item as well, so floating-point rounding can never run past the end.
    while (index < count - 1 && target >= (scratchWeights[index] as number))
      target -= scratchWeights[index++] as number;
    out.push(items[index] as T);
    remaining -= scratchWeights[index] as number;
    count--;
    items[index] = items[count] as T;
    scratchWeights[index] = scratchWeights[count] as number;
  }
  // Drop the references, so a replaced index is not kept alive by the scratch space.
  scratchItems.fill(undefined, 0, filled);
}

/**
 * Appends `need` distinct eligible items from the union of disjoint groups of one priority to
 * `out`, in lottery order. Large groups use repeated weighted draws (see `drawOne`), rejecting repeats
 * and ineligible items; if rejections pile up (most items ineligible), a full pass finishes it.
 */
function drawFromPriority<T extends Weighted>(
  groups: readonly PriorityGroup<T>[],
  need: number,
  eligible: (item: T) => boolean,
  groupEligible: GroupEligible<T>,
  random: Random,
  out: T[],
): void {
  const levelStart = out.length;
  let size = 0;
  let total = 0;
  for (const group of groups) {
    size += group.items.length;
    total += group.total;
  }
  if (size <= 32 || size <= need * 4) {
    drawSequentially(groups, need, eligible, groupEligible, random, out, levelStart);
    return;
  }
  const target = levelStart + need;
  // Acceptance sampling keeps at least 1 in MAX_SKEW tries, so this budget is rarely exhausted.
  const maxAttempts = need * MAX_SKEW * 4 + 16;
  for (let attempt = 0; attempt < maxAttempts && out.length < target; attempt++) {
    let point = random() * total;
    let group = groups[0] as PriorityGroup<T>;
    for (const candidate of groups) {
      group = candidate;
      if (point < candidate.total) break;
      point -= candidate.total;
    }
    const item = drawOne(group, point, random);
    if (item === undefined || drawnSince(out, levelStart, item)) continue;
    if (!groupEligible(group) && !eligible(item)) continue;
    out.push(item);
  }
  if (out.length < target)
    drawSequentially(groups, target - out.length, eligible, groupEligible, random, out, levelStart);
}

/**
 * The first `limit` eligible items across several lists (each sorted by priority, highest first,
 * and disjoint from each other), by priority and then by weighted lottery.
 */
export function drawOrdered<T extends Weighted>(
  lists: ReadonlyArray<readonly PriorityGroup<T>[]>,
  limit: number,
  eligible: (item: T) => boolean,
  random: Random = Math.random,
  groupEligible: GroupEligible<T> = NO_GROUP_SHORTCUT,
): T[] {
  const result: T[] = [];
  const cursors = new Array<number>(lists.length).fill(0);
  while (result.length < limit) {
    let priority = -Infinity;
    for (let i = 0; i < lists.length; i++) {
      const group = (lists[i] as readonly PriorityGroup<T>[])[cursors[i] as number];
      if (group && group.priority > priority) priority = group.priority;
    }
    if (priority === -Infinity) break;
    const level: PriorityGroup<T>[] = [];
    for (let i = 0; i < lists.length; i++) {
      const group = (lists[i] as readonly PriorityGroup<T>[])[cursors[i] as number];
      if (group && group.priority === priority) {
        level.push(group);
        cursors[i] = (cursors[i] as number) + 1;
      }
    }
    drawFromPriority(level, limit - result.length, eligible, groupEligible, random, result);
  }
  return result;
}
