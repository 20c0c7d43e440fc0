import { describe, expect, it } from 'vitest';
import type { FieldProblem } from './errors.js';
import { micros, type Micros } from './money.js';
import { billedKind, chargesPerEvent, priceOf, readPrice, runCost, samePrice } from './prices.js';

const cpm = (amount: number) => ({ model: 'cpm' as const, amountMicros: amount as Micros });

describe('prices', () => {
  it('charges impressions at a CPM, clicks at a CPC, and no event at a flat price or none', () => {
    expect(billedKind(cpm(1))).toBe('impression');
    expect(billedKind({ model: 'cpc', amountMicros: micros(1) })).toBe('click');
    expect(billedKind({ model: 'flat', amountMicros: micros(1) })).toBeNull();
    expect(billedKind(null)).toBeNull();
    expect(chargesPerEvent(cpm(1), 'click')).toBe(false);
    expect(chargesPerEvent(cpm(1), 'impression')).toBe(true);
  });

  it('prices a CPM run with no micro lost: 1,000 impressions in any runs cost the CPM', () => {
    const price = cpm(2_500_001);
    let total = 0;
    for (const [before, count] of [
      [0, 1],
      [1, 333],
      [334, 665],
      [999, 1],
    ] as const)
      total += runCost(price, before, count);
    expect(total).toBe(2_500_001);
    expect(runCost({ model: 'cpc', amountMicros: micros(150_000) }, 7, 3)).toBe(450_000);
    expect(runCost({ model: 'flat', amountMicros: micros(150_000) }, 7, 3)).toBe(0);
  });

  it('reads stored columns, node-postgres strings included', () => {
    expect(priceOf('cpm', '2500000')).toEqual(cpm(2_500_000));
    expect(priceOf(null, null)).toBeNull();
    expect(priceOf('barter', 5)).toBeNull();
  });

  it('reads a price from the API, naming each problem', () => {
    const problems: FieldProblem[] = [];
    expect(readPrice({ model: 'cpc', amountMicros: 250_000 }, 'price', problems)).toEqual({
      model: 'cpc',
      amountMicros: 250_000,
    });
    expect(readPrice(null, 'price', problems)).toBeNull();
    expect(problems).toEqual([]);
    expect(readPrice({ model: 'cpa', amountMicros: 2.5, extra: 1 }, 'price', problems)).toBeNull();
    expect(problems.map((problem) => problem.field)).toEqual([
      'price.extra',
      'price.model',
      'price.amountMicros',
    ]);
    expect(readPrice('2.50', 'p', problems)).toBeNull();
    expect(problems.at(-1)?.field).toBe('p');
  });

  it('tells prices apart by model and amount', () => {
    expect(samePrice(cpm(1), cpm(1))).toBe(true);
    expect(samePrice(cpm(1), cpm(2))).toBe(false);
    expect(samePrice(null, null)).toBe(true);
    expect(samePrice(cpm(1), null)).toBe(false);
  });
});
