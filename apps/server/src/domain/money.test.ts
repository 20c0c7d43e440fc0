import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from './errors.js';
import {
  MAX_MICROS,
  MoneyRangeError,
  addMicros,
  cpmCumulativeCost,
  cpmImpressionCost,
  cpmRunCost,
  currencyDecimals,
  formatMicros,
  formatMoney,
  formatMoneyWithCode,
  isCurrencyCode,
  micros,
  multiplyMicros,
  parseMoney,
  readMoney,
  revenueShareCumulative,
  revenueShareIncrement,
  subtractMicros,
  sumMicros,
  type Micros,
} from './money.js';

const MAX = Number(MAX_MICROS);
/** The oracle: floor(a · b / per) in bigint, as the rule is written. */
const exactShare = (a: number, b: number, per: number) => (BigInt(a) * BigInt(b)) / BigInt(per);
const floorShare = (a: number, b: number, per: number) => Number(exactShare(a, b, per));

/** Any price, weighted towards real ones (cents to hundreds of units per thousand). */
const cpms = fc.oneof(
  fc.integer({ min: 0, max: 500_000_000 }),
  fc.integer({ min: 0, max: MAX }),
  fc.constantFrom(0, 1, 999, 1_000, 1_001, 1_500_000, 2_345_678, MAX),
);
/** Splits of `total` into batches: cut points anywhere in it. */
const splitsOf = (total: number) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: total }), { maxLength: 20 })
    .map((cuts) => [0, ...cuts.sort((a, b) => a - b), total]);

describe('amounts in micros', () => {
  it('reads numbers, bigints and int8 strings exactly, and refuses anything else', () => {
    expect(micros(12_345_678)).toBe(12_345_678);
    expect(micros('9000000000000000')).toBe(MAX);
    expect(micros('-42')).toBe(-42);
    expect(micros(9_000_000_000_000_000n)).toBe(MAX);
    expect(Object.is(micros(-0), 0)).toBe(true);
    for (const bad of [
      1.5,
      NaN,
      Infinity,
      MAX + 1,
      -MAX - 1,
      '1.5',
      '',
      '12a',
      '9000000000000001',
      2n ** 63n,
    ]) {
      expect(() => micros(bad)).toThrow(MoneyRangeError);
    }
  });

  it('adds, subtracts, sums and multiplies exactly, and throws past the maximum instead of rounding', () => {
    const m = (value: number) => micros(value);
    expect(addMicros(m(MAX - 1), m(1))).toBe(MAX);
    expect(subtractMicros(m(-MAX + 1), m(1))).toBe(-MAX);
    expect(sumMicros([m(1), m(2), m(3)])).toBe(6);
    expect(sumMicros([])).toBe(0);
    expect(multiplyMicros(m(1_500_000), 6_000_000_000)).toBe(MAX);
    expect(() => addMicros(m(MAX), m(1))).toThrow('is 9000000000000001, not a whole number of micros within');
    expect(() => subtractMicros(m(-MAX), m(1))).toThrow(MoneyRangeError);
    expect(() => sumMicros([m(MAX), m(MAX)])).toThrow(MoneyRangeError);
    expect(() => multiplyMicros(m(MAX), 2)).toThrow(MoneyRangeError);
    expect(() => multiplyMicros(m(5), 1.5)).toThrow(MoneyRangeError);
    // Past 2^53 a float sum rounds; the check still sees it (never wraps back into range).
    expect(() => addMicros(m(MAX), m(MAX))).toThrow(MoneyRangeError);
  });

  it('agrees with bigint arithmetic wherever the result is in range', () => {
    const amount = fc.integer({ min: -MAX, max: MAX }).map((value) => micros(value));
    fc.assert(
      fc.property(amount, amount, (a, b) => {
        const exact = BigInt(a) + BigInt(b);
        if (exact > BigInt(MAX) || exact < -BigInt(MAX))
          expect(() => addMicros(a, b)).toThrow(MoneyRangeError);
        else expect(BigInt(addMicros(a, b))).toBe(exact);
      }),
    );
  });
});

describe('the cost of CPM impressions, no micro lost to rounding', () => {
  it('costs floor(n · CPM / 1000) for the first n impressions, however large n · CPM is', () => {
    expect(cpmCumulativeCost(micros(1_500_000), 1)).toBe(1_500);
    expect(cpmCumulativeCost(micros(1_234), 1)).toBe(1);
    expect(cpmCumulativeCost(micros(1_234), 999)).toBe(1_232);
    expect(cpmCumulativeCost(micros(1_234), 1_000)).toBe(1_234);
    // n · CPM is 10^18 + 10^8, far past what a float holds exactly: still exact.
    expect(cpmCumulativeCost(micros(100_000_000), 10_000_000_001)).toBe(1_000_000_000_100_000);
    fc.assert(
      fc.property(cpms, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (cpm, n) => {
        const exact = floorShare(n, cpm, 1_000);
        if (exactShare(n, cpm, 1_000) > BigInt(MAX))
          expect(() => cpmCumulativeCost(micros(cpm), n)).toThrow(MoneyRangeError);
        else expect(cpmCumulativeCost(micros(cpm), n)).toBe(exact);
      }),
      { numRuns: 2_000 },
    );
  });

  it('charges impressions 1 to n one by one exactly F(n), each floor(CPM / 1000) or a micro more', () => {
    fc.assert(
      // Prices up to a third of the maximum, so that 3,000 impressions stay within it.
      fc.property(
        cpms.map((cpm) => Math.floor(cpm / 3)),
        fc.integer({ min: 0, max: 3_000 }),
        (cpm, n) => {
          // One assertion per run: thousands of `expect` calls per run made the test slow.
          const costs = Array.from({ length: n }, (_, i) => cpmImpressionCost(micros(cpm), i + 1));
          const each = (cpm - (cpm % 1_000)) / 1_000;
          expect(costs.filter((cost) => cost !== each && cost !== each + 1)).toEqual([]);
          expect(costs.reduce((sum, cost) => sum + cost, 0)).toBe(cpmCumulativeCost(micros(cpm), n));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('charges exactly the CPM for every 1,000 impressions from a multiple of 1,000', () => {
    fc.assert(
      fc.property(
        cpms,
        fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 1_000) - 1 }),
        (cpm, q) => {
          expect(cpmRunCost(micros(cpm), 1_000 * q, 1_000)).toBe(cpm);
          if (exactShare(q, cpm, 1) <= BigInt(MAX))
            expect(cpmCumulativeCost(micros(cpm), 1_000 * q)).toBe(q * cpm);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('charges a run the same however it is split into batches, on any number of instances', () => {
    fc.assert(
      fc.property(
        cpms,
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 100_000 }),
        fc.integer({ min: 0, max: 100_000 }).chain((total) => fc.tuple(fc.constant(total), splitsOf(total))),
        (cpm, before, [total, cuts]) => {
          // The run is F(end) − F(start), exactly, or refused when that is past the maximum.
          const exact = exactShare(before + total, cpm, 1_000) - exactShare(before, cpm, 1_000);
          if (exact > BigInt(MAX)) {
            expect(() => cpmRunCost(micros(cpm), before, total)).toThrow(MoneyRangeError);
            return;
          }
          const whole = cpmRunCost(micros(cpm), before, total);
          expect(BigInt(whole)).toBe(exact);
          const batches = cuts
            .slice(1)
            .map((end, i) => cpmRunCost(micros(cpm), before + cuts[i], end - cuts[i]));
          expect(batches.reduce((sum, cost) => sum + cost, 0)).toBe(whole);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('refuses what is not a count or a price', () => {
    expect(() => cpmCumulativeCost(micros(1_000), -1)).toThrow(MoneyRangeError);
    expect(() => cpmCumulativeCost(micros(1_000), 1.5)).toThrow(MoneyRangeError);
    expect(() => cpmCumulativeCost(-1_000 as Micros, 1)).toThrow(MoneyRangeError);
    expect(() => cpmCumulativeCost(1.5 as Micros, 1)).toThrow(MoneyRangeError);
    expect(() => cpmImpressionCost(micros(1_000), 0)).toThrow(MoneyRangeError);
    expect(() => cpmRunCost(micros(1_000), Number.MAX_SAFE_INTEGER, 1)).toThrow(MoneyRangeError);
    // 10 billion impressions at 1,000 units per thousand: 10 billion units, past the maximum.
    expect(() => cpmCumulativeCost(micros(1_000_000_000), 10_000_000_000)).toThrow(MoneyRangeError);
  });
});

describe("a partner's revenue share, no micro lost to rounding", () => {
  const bpss = fc.oneof(
    fc.integer({ min: 0, max: 10_000 }),
    fc.constantFrom(0, 1, 3_333, 7_000, 9_999, 10_000),
  );
  const spends = fc.oneof(fc.integer({ min: 0, max: MAX }), fc.integer({ min: 0, max: 100_000_000 }));

  it('earns floor(S · bps / 10000) on a cumulative spend S, however large S · bps is', () => {
    expect(revenueShareCumulative(7_000, micros(1_000_001))).toBe(700_000);
    expect(revenueShareCumulative(10_000, MAX_MICROS)).toBe(MAX);
    expect(revenueShareCumulative(0, MAX_MICROS)).toBe(0);
    fc.assert(
      fc.property(bpss, spends, (bps, spend) => {
        expect(revenueShareCumulative(bps, micros(spend))).toBe(floorShare(spend, bps, 10_000));
      }),
      { numRuns: 2_000 },
    );
  });

  it('adds up the earnings of each spend to exactly the earnings of their total', () => {
    fc.assert(
      fc.property(
        bpss,
        fc.array(fc.integer({ min: 0, max: 50_000 }), { maxLength: 200 }),
        (bps, increments) => {
          let spend = 0;
          let earned = 0;
          for (const increment of increments) {
            const earning = revenueShareIncrement(bps, micros(spend), micros(increment));
            expect(earning).toBeLessThanOrEqual(increment);
            earned += earning;
            spend += increment;
          }
          expect(earned).toBe(revenueShareCumulative(bps, micros(spend)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('earns exactly bps micros on every 10,000 micros of spend from a multiple of 10,000', () => {
    fc.assert(
      fc.property(bpss, fc.integer({ min: 0, max: MAX / 10_000 - 1 }), (bps, q) => {
        expect(revenueShareIncrement(bps, micros(10_000 * q), micros(10_000))).toBe(bps);
      }),
      { numRuns: 2_000 },
    );
  });

  it('earns the same on a spend however it is split into batches', () => {
    fc.assert(
      fc.property(
        bpss,
        fc.integer({ min: 0, max: MAX - 1_000_000_000 }),
        fc
          .integer({ min: 0, max: 1_000_000_000 })
          .chain((total) => fc.tuple(fc.constant(total), splitsOf(total))),
        (bps, before, [total, cuts]) => {
          const whole = revenueShareIncrement(bps, micros(before), micros(total));
          const batches = cuts
            .slice(1)
            .map((end, i) => revenueShareIncrement(bps, micros(before + cuts[i]), micros(end - cuts[i])));
          expect(batches.reduce((sum, earning) => sum + earning, 0)).toBe(whole);
          expect(BigInt(whole)).toBe(
            exactShare(before + total, bps, 10_000) - exactShare(before, bps, 10_000),
          );
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('refuses a share outside 0 to 10,000 basis points and spend past the maximum', () => {
    expect(() => revenueShareCumulative(10_001, micros(1))).toThrow(MoneyRangeError);
    expect(() => revenueShareCumulative(-1, micros(1))).toThrow(MoneyRangeError);
    expect(() => revenueShareCumulative(12.5, micros(1))).toThrow(MoneyRangeError);
    expect(() => revenueShareIncrement(5_000, MAX_MICROS, micros(1))).toThrow(MoneyRangeError);
    expect(() => revenueShareIncrement(5_000, micros(5), -1 as Micros)).toThrow(MoneyRangeError);
  });
});

describe('currencies', () => {
  it('knows ISO 4217 codes in capitals, and their decimals', () => {
    for (const code of ['USD', 'EUR', 'JPY', 'BHD', 'GBP']) expect(isCurrencyCode(code)).toBe(true);
    for (const code of ['usd', 'US', 'USDT', 'XYZ', '', ' USD']) expect(isCurrencyCode(code)).toBe(false);
    expect([currencyDecimals('JPY'), currencyDecimals('USD'), currencyDecimals('BHD')]).toEqual([0, 2, 3]);
    expect(() => currencyDecimals('XYZ')).toThrow(
      '"XYZ" must be an ISO 4217 currency code of three capital letters, such as USD, EUR or JPY',
    );
  });
});

describe('amounts shown to people', () => {
  it.each([
    [12_345_678, 'USD', '12.35', 'USD 12.35'],
    [1_234_567_890_000, 'USD', '1,234,567.89', 'USD 1,234,567.89'],
    [5_000, 'USD', '0.01', 'USD 0.01'],
    [4_999, 'USD', '0.00', 'USD 0.00'],
    [-5_000, 'USD', '-0.01', 'USD -0.01'],
    [-4_999, 'USD', '0.00', 'USD 0.00'],
    [-12_345_678, 'USD', '-12.35', 'USD -12.35'],
    [1_500_000_000, 'JPY', '1,500', 'JPY 1,500'],
    [499_999, 'JPY', '0', 'JPY 0'],
    [1_234_500, 'BHD', '1.235', 'BHD 1.235'],
    [0, 'EUR', '0.00', 'EUR 0.00'],
    [MAX, 'USD', '9,000,000,000.00', 'USD 9,000,000,000.00'],
  ])('shows %i micros of %s as %s', (amount, currency, plain, withCode) => {
    expect(formatMoney(micros(amount), currency)).toBe(plain);
    expect(formatMoneyWithCode(micros(amount), currency)).toBe(withCode);
  });

  it("rounds half away from zero to the currency's decimals, as Intl does on exact decimals", () => {
    const currencies = fc.constantFrom('USD', 'JPY', 'BHD', 'EUR', 'KWD', 'CLP');
    fc.assert(
      fc.property(fc.integer({ min: -MAX, max: MAX }), currencies, (amount, currency) => {
        const decimals = currencyDecimals(currency);
        // Intl formats a decimal string exactly (no float), rounding half away from zero.
        const exact = `${amount < 0 ? '-' : ''}${String(Math.abs(amount))
          .padStart(7, '0')
          .replace(/(\d{6})$/, '.$1')}`;
        const intl = new Intl.NumberFormat('en-US', {
          minimumFractionDigits: decimals,
          maximumFractionDigits: decimals,
          // `format` takes strings as exact decimals since Node 20; @types/node 20 still says number.
        }).format(exact as unknown as number);
        expect(formatMoney(micros(amount), currency)).toBe(intl.replace(/^-(?=[0.,]*$)/, ''));
      }),
      { numRuns: 2_000 },
    );
  });

  it('shows an amount exactly and reads it back', () => {
    expect(formatMicros(micros(1_000_250_000))).toBe('1,000.25');
    expect(formatMicros(micros(1))).toBe('0.000001');
    expect(formatMicros(micros(-12_000_000))).toBe('-12');
    expect(formatMicros(micros(0))).toBe('0');
    fc.assert(
      fc.property(fc.integer({ min: -MAX, max: MAX }), (amount) => {
        const shown = formatMicros(micros(amount));
        expect(parseMoney(shown, 'amount', { allowNegative: true })).toBe(amount);
        expect(parseMoney(shown.replaceAll(',', ''), 'amount', { allowNegative: true })).toBe(amount);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('amounts typed by people', () => {
  it.each([
    ['12.5', 12_500_000],
    ['1,000.25', 1_000_250_000],
    ['0.000001', 1],
    ['  42 ', 42_000_000],
    ['.5', 500_000],
    ['5.', 5_000_000],
    ['007', 7_000_000],
    ['1.5000000000', 1_500_000],
    ['1,234,567', 1_234_567_000_000],
    ['9,000,000,000', MAX],
    ['-0', 0],
  ])('reads "%s" as %i micros', (text, expected) => {
    expect(parseMoney(text, 'price')).toBe(expected);
  });

  it('takes negative amounts only where allowed', () => {
    expect(parseMoney('-3.25', 'adjustment', { allowNegative: true })).toBe(-3_250_000);
    expect(parseMoney('-9,000,000,000', 'adjustment', { allowNegative: true })).toBe(-MAX);
    expect(readMoney('-3.25')).toEqual({ problem: 'must not be negative' });
  });

  it.each([
    ['', 'is required: an amount such as 1,000.25'],
    ['   ', 'is required: an amount such as 1,000.25'],
    ['abc', 'must be an amount such as 1,000.25'],
    ['12 EUR', 'must be an amount such as 1,000.25'],
    ['$12', 'must be an amount such as 1,000.25'],
    ['1e5', 'must be an amount such as 1,000.25'],
    ['+5', 'must be an amount such as 1,000.25'],
    ['1.2.3', 'must be an amount such as 1,000.25'],
    ['-', 'must be an amount such as 1,000.25'],
    ['.', 'must be an amount such as 1,000.25'],
    [
      '12,5',
      'has a comma in the wrong place: commas go between thousands (1,000.25), a point before decimals',
    ],
    [
      '1.000,25',
      'has a comma in the wrong place: commas go between thousands (1,000.25), a point before decimals',
    ],
    [
      '1,0000',
      'has a comma in the wrong place: commas go between thousands (1,000.25), a point before decimals',
    ],
    [
      ',100',
      'has a comma in the wrong place: commas go between thousands (1,000.25), a point before decimals',
    ],
    ['0.0000001', 'must have at most 6 decimals: the smallest amount is 0.000001'],
    ['1.1234567', 'must have at most 6 decimals: the smallest amount is 0.000001'],
    ['-1', 'must not be negative'],
    ['9000000000.000001', 'must be at most 9,000,000,000'],
    ['99999999999999999999999', 'must be at most 9,000,000,000'],
  ])('refuses "%s": %s', (text, problem) => {
    expect(readMoney(text)).toEqual({ problem });
    expect(() => parseMoney(text, 'budget')).toThrow(DomainError);
    expect(() => parseMoney(text, 'budget')).toThrow(`budget ${problem}`);
  });

  it('holds to a smaller maximum when given one, and names it', () => {
    expect(parseMoney('1,000', 'price', { max: micros(1_000_000_000) })).toBe(1_000_000_000);
    expect(readMoney('1,000.000001', { max: micros(1_000_000_000) })).toEqual({
      problem: 'must be at most 1,000',
    });
    expect(readMoney('-9000000000.000001', { allowNegative: true })).toEqual({
      problem: 'must be at least -9,000,000,000',
    });
  });

  it('reads every decimal of up to 6 places exactly, with or without commas', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 9_000_000_000n }),
        fc.integer({ min: 0, max: 999_999 }),
        (units, part) => {
          const fraction = String(part).padStart(6, '0');
          const expected = units * 1_000_000n + BigInt(part);
          if (expected > BigInt(MAX)) return;
          expect(BigInt(parseMoney(`${units}.${fraction}`, 'amount'))).toBe(expected);
          const grouped = String(units).replace(/\B(?=(\d{3})+$)/g, ',');
          expect(BigInt(parseMoney(`${grouped}.${fraction}`, 'amount'))).toBe(expected);
        },
      ),
    );
  });
});
