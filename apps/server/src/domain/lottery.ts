/**
 * Ordering of eligible campaigns (decisions D4): higher priority first; inside one priority a
 * weighted lottery without replacement, so delivery rotates instead of always serving the same
 * campaigns. Everything here is precomputed once per index build so that a draw costs
 * O(limit · log n) instead of O(n) on the request path.
 */

export interface Weighted {
  readonly priority: number;
  readonly weight: number;
}

/** Campaigns of one priority with prefix sums of their weights, for binary-search draws. */
export interface PriorityGroup<T extends Weighted> {
  readonly priority: number;
  readonly items: readonly T[];
  /** cumulative[i] = weight of items[0..i] inclusive. */
  readonly cumulative: Float64Array;
  readonly total: number;
}

export type Random = () => number;

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
      const cumulative = new Float64Array(members.length);
      let total = 0;
      members.forEach((member, i) => {
        total += member.weight;
        cumulative[i] = total;
      });
      return { priority, items: members, cumulative, total };
    });
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

/**
 * Weighted order without replacement over a small set (Efraimidis–Spirakis): each item gets the key
 * log(u)/w and the largest keys win. Same distribution as drawing one by one.
 */
function shuffleAll<T extends Weighted>(
  groups: readonly PriorityGroup<T>[],
  need: number,
  eligible: (item: T) => boolean,
  exclude: ReadonlySet<T>,
  random: Random,
): T[] {
  const keyed: Array<{ item: T; key: number }> = [];
  for (const group of groups) {
    for (const item of group.items) {
      if (exclude.has(item) || !eligible(item)) continue;
      keyed.push({ item, key: Math.log(random() || Number.MIN_VALUE) / item.weight });
    }
  }
  keyed.sort((a, b) => b.key - a.key);
  return keyed.slice(0, need).map((entry) => entry.item);
}

/**
 * Draws `need` distinct eligible items from the union of disjoint groups of one priority, in
 * lottery order. Large groups use repeated binary-search draws with rejection of repeats and
 * ineligible items; if rejections pile up (most items ineligible), it finishes with a full pass.
 */
function drawFromPriority<T extends Weighted>(
  groups: readonly PriorityGroup<T>[],
  need: number,
  eligible: (item: T) => boolean,
  random: Random,
): T[] {
  let size = 0;
  let total = 0;
  for (const group of groups) {
    size += group.items.length;
    total += group.total;
  }
  if (size <= 32 || size <= need * 4) return shuffleAll(groups, need, eligible, new Set(), random);

  const picked = new Set<T>();
  const order: T[] = [];
  const maxAttempts = need * 8 + 16;
  for (let attempt = 0; attempt < maxAttempts && order.length < need; attempt++) {
    let target = random() * total;
    let group = groups[0] as PriorityGroup<T>;
    for (const candidate of groups) {
      group = candidate;
      if (target < candidate.total) break;
      target -= candidate.total;
    }
    const item = group.items[pickIndex(group.cumulative, target)] as T;
    if (picked.has(item) || !eligible(item)) continue;
    picked.add(item);
    order.push(item);
  }
  if (order.length < need) order.push(...shuffleAll(groups, need - order.length, eligible, picked, random));
  return order;
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
  const cursors = lists.map(() => 0);
  while (result.length < limit) {
    let priority = -Infinity;
    lists.forEach((list, i) => {
      const group = list[cursors[i] as number];
      if (group && group.priority > priority) priority = group.priority;
    });
    if (priority === -Infinity) break;
    const level: PriorityGroup<T>[] = [];
    lists.forEach((list, i) => {
      const group = list[cursors[i] as number];
      if (group && group.priority === priority) {
        level.push(group);
        cursors[i] = (cursors[i] as number) + 1;
      }
    });
    result.push(...drawFromPriority(level, limit - result.length, eligible, random));
  }
  return result;
}
