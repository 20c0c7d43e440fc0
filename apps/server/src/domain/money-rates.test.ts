import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MICROS, MoneyRangeError, micros } from './money.js';
import { effectiveCpc, effectiveCpm, floorOfProduct, moneyFigure } from './money-rates.js';

/** The oracle: the floor of a · b / c in bigint, as the rule is written. */
function exactFloor(a: number, b: number, c: number): number {
  const n = BigInt(a) * BigInt(b);
  const q = n / BigInt(c);
  return Number(n % BigInt(c) !== 0n && n < 0n ? q - 1n : q);
}

const MAX = Number(MAX_MICROS);

describe('floorOfProduct', () => {
  it('floors, toward minus infinity for a negative quotient', () => {
    expect(floorOfProduct(7, 1, 2)).toBe(3);
    expect(floorOfProduct(-7, 1, 2)).toBe(-4);
    expect(floorOfProduct(-6, 1, 2)).toBe(-3);
    expect(floorOfProduct(0, 1_000, 3)).toBe(0);
  });

  it('is exact where the product passes 2^53', () => {
    // 9,000,000,000 units × 1,000 is about 2^63: a float holds neither it nor its quotient's last digits.
    expect(floorOfProduct(MAX, 1_000, 1_000_003)).toBe(8_999_973_000_080);
    expect(floorOfProduct(-MAX, 1_000, 1_000_003)).toBe(exactFloor(-MAX, 1_000, 1_000_003));
  });

  it('agrees with bigint arithmetic for any safe operands', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -MAX, max: MAX }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        (a, b, c) => {
          const exact = BigInt(exactFloor(a, b, c));
          if (exact > BigInt(Number.MAX_SAFE_INTEGER) || exact < BigInt(Number.MIN_SAFE_INTEGER)) {
            expect(() => floorOfProduct(a, b, c)).toThrow(MoneyRangeError);
          } else expect(floorOfProduct(a, b, c)).toBe(exactFloor(a, b, c));
        },
      ),
    );
  });

  it('refuses what is not a safe integer, and a divisor that is not above zero', () => {
    expect(() => floorOfProduct(1.5, 1, 1)).toThrow(MoneyRangeError);
    expect(() => floorOfProduct(2 ** 53, 1, 1)).toThrow(MoneyRangeError);
    expect(() => floorOfProduct(1, 1, 0)).toThrow('a divisor is 0, not above zero');
  });
});

describe('effective CPM and CPC', () => {
  it('are null without impressions or clicks', () => {
    expect(effectiveCpm(micros(5_000_000), 0)).toBeNull();
    expect(effectiveCpc(micros(5_000_000), 0)).toBeNull();
  });

  it('floor to the micro where a float division rounds up', () => {
    // 2 micros over 3 impressions: 666.67 micros per thousand, shown as 666, not 667.
    expect(effectiveCpm(micros(2), 3)).toBe(666);
    // 2,500,001 micros over 3 clicks: 833,333.67, floored.
    expect(effectiveCpc(micros(2_500_001), 3)).toBe(833_333);
    // Spend of 10 units over 3 impressions: float gives 3333333333.3333335; exactly floored it is …333.
    expect(effectiveCpm(micros(10_000_000), 3)).toBe(3_333_333_333);
  });

  it('are exact for huge spends, where spend × 1000 passes 2^53', () => {
    // A float quotient of 9,000,000,000 units × 1000 over 1,000,003 impressions ends in …081.
    expect(effectiveCpm(MAX_MICROS, 1_000_003)).toBe(8_999_973_000_080);
    expect(effectiveCpc(micros(8_999_999_999_999_999), 7)).toBe(1_285_714_285_714_285);
    expect(effectiveCpm(MAX_MICROS, 1_000)).toBe(MAX);
  });

  it('agree with the bigint floor on any spend and count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX }), fc.integer({ min: 1_000, max: 10 ** 12 }), (spend, n) => {
        expect(effectiveCpm(micros(spend), n)).toBe(exactFloor(spend, 1_000, n));
        expect(effectiveCpc(micros(spend), n)).toBe(exactFloor(spend, 1, n));
      }),
    );
  });

  it('refuse an eCPM past the largest amount rather than show a wrong one', () => {
    expect(() => effectiveCpm(MAX_MICROS, 1)).toThrow(MoneyRangeError);
  });
});

describe('moneyFigure', () => {
  it('writes units with the currency decimals and no thousands separator', () => {
    expect(moneyFigure(micros(12_345_678_901), 'USD')).toBe('12345.68');
    expect(moneyFigure(micros(1_200_000_000), 'JPY')).toBe('1200');
    expect(moneyFigure(micros(1_234_567), 'BHD')).toBe('1.235');
    expect(moneyFigure(micros(0), 'EUR')).toBe('0.00');
  });
});
