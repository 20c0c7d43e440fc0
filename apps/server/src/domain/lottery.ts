/**
 * Ordering of eligible campaigns (decisions D4): higher priority first; inside one priority a
 * weighted lottery without replacement, so delivery rotates instead of always serving the same
 * campaigns. Everything here is precomputed once per index build so that a draw costs about
 * O(limit) memory reads instead of O(n) on the request path.
 */

export interface Weighted {
  readonly priority: number;
  readonly weight: number;
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
}

export type Random = () => number;

/** Acceptance sampling is used while the heaviest item weighs at most this many times the average. */
const MAX_SKEW = 4;

/** Splits items into groups by priority, highest first. */
export function groupByPriority<T extends Weighted>(items: readonly T[]): PriorityGroup<T>[] {
  const byPriority = new Map<number, T[]>();
  for (const item of items) {
    const group = byPriority.get(item.priority);
    if (group) group.push(item);
    else byPriority.set(item.priority, [item]);
  }
  return [...byPriority.entries()]
    .sort(([a], [b]) => b - a)
    .map(([priority, members]) => {
      const weights = Uint32Array.from(members, (member) => member.weight);
      let total = 0;
      let maxWeight = 0;
      for (const weight of weights) {
        total += weight;
        if (weight > maxWeight) maxWeight = weight;
      }
      let cumulative: Float64Array | null = null;
      if (maxWeight * members.length > MAX_SKEW * total) {
        cumulative = new Float64Array(members.length);
        let sum = 0;
        weights.forEach((weight, i) => (cumulative![i] = sum += weight));
      }
      // slice(): an exact-size copy; arrays grown by push keep up to half again as spare capacity.
      return { priority, items: members.slice(), weights, total, maxWeight, cumulative };
    });
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
 * Weighted order without replacement over a small set: repeated draws, each proportional to the
 * weight of what is left. Linear scans beat sorting and allocation for the tens of items a priority
 * level of one placement usually holds. Appends up to `need` items to `out`.
 */
function drawSequentially<T extends Weighted>(
  groups: readonly PriorityGroup<T>[],
  need: number,
  eligible: (item: T) => boolean,
  random: Random,
  out: T[],
  levelStart: number,
): void {
  const pool: T[] = [];
  let remaining = 0;
  for (const group of groups) {
    for (const item of group.items) {
      if (!eligible(item) || drawnSince(out, levelStart, item)) continue;
      pool.push(item);
      remaining += item.weight;
    }
  }
  for (let drawn = 0; drawn < need && pool.length > 0; drawn++) {
    let target = random() * remaining;
    let index = 0;
    // Stop on the last item as well, so floating-point rounding can never run past the end.
    while (index < pool.length - 1 && target >= (pool[index] as T).weight)
      target -= (pool[index++] as T).weight;
    const item = pool[index] as T;
    pool[index] = pool[pool.length - 1] as T;
    pool.pop();
    remaining -= item.weight;
    out.push(item);
  }
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
    drawSequentially(groups, need, eligible, random, out, levelStart);
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
    if (item === undefined || !eligible(item) || drawnSince(out, levelStart, item)) continue;
    out.push(item);
  }
  if (out.length < target) drawSequentially(groups, target - out.length, eligible, random, out, levelStart);
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
    drawFromPriority(level, limit - result.length, eligible, random, result);
  }
  return result;
}
