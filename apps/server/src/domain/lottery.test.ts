import { describe, expect, it } from 'vitest';
import { drawOrdered, groupByPriority, type Weighted } from './lottery.js';
import { mulberry32 } from './seeded-random.js';

interface Item extends Weighted {
  id: number;
}

const items = (count: number, fields: (i: number) => Partial<Item> = () => ({})): Item[] =>
  Array.from({ length: count }, (_, i) => ({ id: i, priority: 0, weight: 1, ...fields(i) }));

function permutations(ids: readonly number[]): number[][] {
  if (ids.length <= 1) return [[...ids]];
  return ids.flatMap((id, i) =>
    permutations([...ids.slice(0, i), ...ids.slice(i + 1)]).map((rest) => [id, ...rest]),
  );
}

function firstPickShares(list: Item[], draws: number, eligible: (item: Item) => boolean = () => true) {
  const random = mulberry32(7);
  const groups = groupByPriority(list);
  const counts = new Map<number, number>();
  for (let i = 0; i < draws; i++) {
    const [first] = drawOrdered([groups], 1, eligible, random);
    counts.set(first.id, (counts.get(first.id) ?? 0) + 1);
  }
  return (id: number) => (counts.get(id) ?? 0) / draws;
}

describe('groupByPriority', () => {
  it('orders groups from the highest priority down with packed weights and totals', () => {
    const groups = groupByPriority(items(4, (i) => ({ priority: [1, 5, 1, -2][i], weight: i + 1 })));
    expect(groups.map((g) => g.priority)).toEqual([5, 1, -2]);
    expect([...groups[1].weights]).toEqual([1, 3]);
    expect(groups[1]).toMatchObject({ total: 4, maxWeight: 3, cumulative: null });
  });

  it('records the span in which every item of a group is in flight', () => {
    const [group] = groupByPriority(
      items(3, (i) => ({ startAt: [null, 100, 50][i], endAt: [900, null, 500][i] })),
    );
    expect(group).toMatchObject({ allInFlightFrom: 100, allInFlightUntil: 500 });
    const [open] = groupByPriority(items(2));
    expect(open).toMatchObject({ allInFlightFrom: -Infinity, allInFlightUntil: Infinity });
  });

  it('keeps prefix sums only for skewed groups', () => {
    const skewed = groupByPriority(items(100, (i) => ({ weight: i === 0 ? 100 : 1 })))[0];
    expect(skewed.cumulative?.[99]).toBe(199);
    const even = groupByPriority(items(100, (i) => ({ weight: 1 + (i % 4) })))[0];
    expect(even.cumulative).toBeNull();
  });
});

describe('drawOrdered', () => {
  it('skips the per-item check only for groups declared wholly eligible', () => {
    const groups = groupByPriority(items(5, (i) => ({ priority: i < 2 ? 1 : 0 })));
    const noneEligible = () => false;
    const onlyTop = (group: { priority: number }) => group.priority === 1;
    const drawn = drawOrdered([groups], 10, noneEligible, mulberry32(1), onlyTop);
    expect(drawn.map((item) => item.id).sort()).toEqual([0, 1]);
    expect(drawOrdered([groups], 10, noneEligible, mulberry32(1))).toEqual([]);
  });

  it('draws in proportion to weight in a small group (sequential path)', () => {
    const share = firstPickShares(
      items(3, (i) => ({ weight: [1, 1, 2][i] })),
      20_000,
    );
    expect(share(0)).toBeCloseTo(0.25, 1);
    expect(share(2)).toBeCloseTo(0.5, 1);
    expect(Math.abs(share(2) - 0.5)).toBeLessThan(0.02);
  });

  it.each([[[1, 1, 8]], [[1, 2, 3, 4]]])(
    'orders a small group %j as successive draws from what is left, at every position',
    (weights) => {
      // Without replacement each position is drawn in proportion to the weight still left, so an
      // ordering's probability is the product of weight / (weights not yet drawn). With [1, 1, 8]
      // the heavy item follows a light first pick 8 times in 9; drawing later positions against the
      // full total instead would make it 8 in 10 or 9 in 10, and after the heavy one a light item 1
      // in 10 (instead of 1 in 2) for one of the two.
      const draws = 20_000;
      const list = items(weights.length, (i) => ({ weight: weights[i] }));
      const groups = groupByPriority(list);
      const random = mulberry32(11);
      const counts = new Map<string, number>();
      for (let i = 0; i < draws; i++) {
        const order = drawOrdered([groups], list.length, () => true, random)
          .map((item) => item.id)
          .join();
        counts.set(order, (counts.get(order) ?? 0) + 1);
      }
      for (const order of permutations(list.map((item) => item.id))) {
        let left = weights.reduce((sum, weight) => sum + weight, 0);
        let expected = 1;
        for (const id of order) {
          expected *= weights[id] / left;
          left -= weights[id];
        }
        // Six standard deviations of the observed share: never flaky, and still far narrower than
        // the error of drawing later positions against the wrong total.
        const tolerance = 6 * Math.sqrt((expected * (1 - expected)) / draws);
        const observed = (counts.get(order.join()) ?? 0) / draws;
        expect(Math.abs(observed - expected), `ordering ${order.join()}`).toBeLessThan(tolerance);
      }
    },
  );

  it('draws in proportion to weight in a large, evenly weighted group (acceptance path)', () => {
    // Weights 1, 2, 3, 4 repeating over 200 items: the 50 items of weight 4 hold 200 of 500.
    const list = items(200, (i) => ({ weight: 1 + (i % 4) }));
    const share = firstPickShares(list, 20_000);
    const heavy = list.filter((item) => item.weight === 4).reduce((sum, item) => sum + share(item.id), 0);
    expect(Math.abs(heavy - 0.4)).toBeLessThan(0.02);
  });

  it('draws in proportion to weight in a large, skewed group (binary-search path)', () => {
    // 100 items: item 0 has weight 100, the other 99 weight 1, so item 0 comes first about half the time.
    const share = firstPickShares(
      items(100, (i) => ({ weight: i === 0 ? 100 : 1 })),
      20_000,
    );
    expect(Math.abs(share(0) - 100 / 199)).toBeLessThan(0.02);
  });

  it('returns distinct items, the highest priority first, cut at the limit', () => {
    const list = items(300, (i) => ({ priority: i % 3 }));
    const random = mulberry32(1);
    for (let round = 0; round < 50; round++) {
      const drawn = drawOrdered([groupByPriority(list)], 150, () => true, random);
      expect(drawn).toHaveLength(150);
      expect(new Set(drawn).size).toBe(150);
      expect(drawn.slice(0, 100).every((item) => item.priority === 2)).toBe(true);
      expect(drawn.slice(100).every((item) => item.priority === 1)).toBe(true);
    }
  });

  it('skips ineligible items even when nearly all are ineligible (fallback path)', () => {
    const list = items(1000);
    const eligible = (item: Item) => item.id % 100 === 0;
    const drawn = drawOrdered([groupByPriority(list)], 10, eligible, mulberry32(3));
    expect(drawn.map((item) => item.id).sort((a, b) => a - b)).toEqual([
      0, 100, 200, 300, 400, 500, 600, 700, 800, 900,
    ]);
  });

  it('merges several disjoint lists by priority', () => {
    const a = groupByPriority([{ id: 1, priority: 1, weight: 1 }]);
    const b = groupByPriority([
      { id: 2, priority: 3, weight: 1 },
      { id: 3, priority: 0, weight: 1 },
    ]);
    expect(drawOrdered([a, b], 10, () => true).map((item) => item.id)).toEqual([2, 1, 3]);
  });

  it('returns nothing from empty lists', () => {
    expect(drawOrdered([[], []], 10, () => true)).toEqual([]);
  });
});
