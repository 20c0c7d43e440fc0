import { invalidField } from './errors.js';

/**
 * Money, exact to the micro. A deployment counts every amount in one ISO 4217 currency, as a whole
 * number of micros of it (1 unit = 1,000,000 micros): prices, costs, budgets, spend and earnings.
 * Nothing here rounds money: every value is a whole number, every step is exact integer arithmetic
 * (a division only ever of a multiple of its divisor) or throws, and no fraction is ever held.
 *
 * Why `number` and not `bigint`: every place an amount crosses a boundary reads numbers. better-sqlite3
 * returns INTEGER columns as numbers (bigints only with `safeIntegers()`, for every integer column of
 * a statement at once), the JSON of the API, the SDK and the dashboard carry numbers, and a JavaScript
 * client reads any JSON integer past 2^53 wrongly whatever the server holds. node-postgres returns
 * int8 as a string, which {@link micros} reads exactly. So an amount is a safe integer, checked after
 * every operation (a value past the maximum throws {@link MoneyRangeError}; it never wraps or loses a
 * micro), and bigint is used only inside a computation whose intermediate product could pass 2^53.
 *
 * The maximum, {@link MAX_MICROS}, is 9,000,000,000 units (just under 2^53 micros, round so that
 * people can be told it): ample in dollars or euros, but about 60 million dollars' worth of yen and
 * under a million dollars' worth of rupiah or dong. A total past it (a deployment's lifetime revenue
 * in such a currency) throws rather than being wrong.
 */

declare const microsBrand: unique symbol;

/** A whole number of micros within ±{@link MAX_MICROS}: made by {@link micros} or the functions here. */
export type Micros = number & { readonly [microsBrand]: true };

/** Micros in one unit of the currency. */
export const MICROS_PER_UNIT = 1_000_000;

/** The largest amount: 9,000,000,000 units, under 2^53 − 1 micros. */
export const MAX_MICROS = 9_000_000_000_000_000 as Micros;
/** The smallest amount (a correction can be negative): −{@link MAX_MICROS}. */
export const MIN_MICROS = -9_000_000_000_000_000 as Micros;

/** A revenue share is 0 to 10,000 basis points (0 % to 100 %). */
export const MAX_BASIS_POINTS = 10_000;

/** Impressions a CPM prices: the price is per thousand. */
const CPM_IMPRESSIONS = 1_000;

/**
 * An amount outside ±{@link MAX_MICROS}, or a value that is not a whole number of micros, reached
 * code that computes money: a fault of the caller (input is checked where it enters), never rounded.
 */
export class MoneyRangeError extends RangeError {
  override readonly name = 'MoneyRangeError';
}

/** `value` as Micros, or a {@link MoneyRangeError} saying what was computed. */
function checked(value: number, what: () => string): Micros {
  if (!Number.isInteger(value) || Math.abs(value) > MAX_MICROS) {
    throw new MoneyRangeError(`${what()} is ${value}, not a whole number of micros within ±${MAX_MICROS}`);
  }
  // -0 would print as "0" yet compare oddly (Object.is): every zero is the same zero.
  return (value === 0 ? 0 : value) as Micros;
}

/**
 * An amount read from outside the arithmetic: a literal, a better-sqlite3 number, a bigint, or
 * node-postgres's string for an int8 column. Throws {@link MoneyRangeError} for anything but a whole
 * number within ±{@link MAX_MICROS}.
 */
export function micros(value: number | bigint | string): Micros {
  if (typeof value === 'number') return checked(value, () => 'an amount');
  const exact = typeof value === 'bigint' ? value : /^-?\d{1,20}$/.test(value) ? BigInt(value) : undefined;
  if (exact === undefined || exact > BigInt(MAX_MICROS) || exact < -BigInt(MAX_MICROS)) {
    throw new MoneyRangeError(
      `an amount is "${String(value)}", not a whole number of micros within ±${MAX_MICROS}`,
    );
  }
  return checked(Number(exact), () => 'an amount');
}

export function addMicros(a: Micros, b: Micros): Micros {
  return checked(a + b, () => `${a} + ${b}`);
}

export function subtractMicros(a: Micros, b: Micros): Micros {
  return checked(a - b, () => `${a} − ${b}`);
}

/** The total of `amounts`; throws as soon as a running total passes ±{@link MAX_MICROS}. */
export function sumMicros(amounts: Iterable<Micros>): Micros {
  let total = 0 as Micros;
  for (const amount of amounts) total = addMicros(total, amount);
  return total;
}

/** `amount` times a whole number `times` (a flat price over several flights, a CPC times clicks). */
export function multiplyMicros(amount: Micros, times: number): Micros {
  if (!Number.isSafeInteger(times)) throw new MoneyRangeError(`a multiplier is ${times}, not a whole number`);
  return checked(amount * times, () => `${amount} × ${times}`);
}

function wholeCount(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new MoneyRangeError(`${what} is ${value}, not a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  return value;
}

function rate(value: Micros, what: string): Micros {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_MICROS) {
    throw new MoneyRangeError(`${what} is ${value}, not a whole number of micros from 0 to ${MAX_MICROS}`);
  }
  return value;
}

/** A whole number: a safe integer where it fits, a bigint where it does not. */
type Whole = number | bigint;

/**
 * floor(count · rate / per), exactly, for whole `count` and `rate` ≥ 0 and `per` > 0, without forming
 * count · rate (past 2^53 for a campaign's lifetime of impressions at any real price). With
 * count = per · q + r, count · rate / per = q · rate + r · rate / per, and q · rate is whole, so the
 * floor is q · rate + floor(r · rate / per). Only when that is not a safe integer (a result past the
 * maximum, or a rate past 2^53 / per: a CPM of 9 million units) is it taken in bigint.
 */
function floorOfShare(count: number, rateMicros: number, per: number): Whole {
  const r = count % per;
  const q = (count - r) / per; // exact: count − r is a multiple of per
  const part = r * rateMicros;
  const total = q * rateMicros + (part - (part % per)) / per;
  // A product or sum past 2^53 − 1 rounds to 2^53 or more, so these checks see every inexact step.
  if (Number.isSafeInteger(part) && Number.isSafeInteger(total)) return total;
  return (BigInt(count) * BigInt(rateMicros)) / BigInt(per);
}

function difference(a: Whole, b: Whole): Whole {
  return typeof a === 'number' && typeof b === 'number' ? a - b : BigInt(a) - BigInt(b);
}

function wholeMicros(value: Whole, what: () => string): Micros {
  if (typeof value === 'number') return checked(value, what);
  if (value > BigInt(MAX_MICROS))
    throw new MoneyRangeError(`${what()} is ${value}, past ${MAX_MICROS} micros`);
  return checked(Number(value), what);
}

/**
 * What the first `impressions` billable impressions of a campaign priced `cpm` micros per thousand
 * cost together: F(n) = floor(n · CPM / 1000). The n-th costs F(n) − F(n − 1), so every 1,000
 * impressions (from a multiple of 1,000) cost exactly the CPM, each costs floor(CPM / 1000) or one
 * micro more, and no micro is lost or invented to rounding however impressions are batched.
 */
export function cpmCumulativeCost(cpm: Micros, impressions: number): Micros {
  rate(cpm, 'a CPM');
  wholeCount(impressions, 'an impression count');
  return wholeMicros(
    floorOfShare(impressions, cpm, CPM_IMPRESSIONS),
    () => `${impressions} impressions at a CPM of ${cpm}`,
  );
}

/**
 * What `count` billable impressions cost after the campaign's first `before` (what one batch's commit
 * charges): F(before + count) − F(before). F(1000q + m) = q · CPM + F(m), so this depends only on
 * `before` modulo 1,000 and holds for any lifetime count: it is taken as F(r + count) − F(r).
 */
export function cpmRunCost(cpm: Micros, before: number, count: number): Micros {
  rate(cpm, 'a CPM');
  wholeCount(before, 'the impressions before a run');
  wholeCount(count, 'the impressions of a run');
  wholeCount(before + count, 'the impressions up to the end of a run');
  const r = before % CPM_IMPRESSIONS;
  return wholeMicros(
    difference(floorOfShare(r + count, cpm, CPM_IMPRESSIONS), floorOfShare(r, cpm, CPM_IMPRESSIONS)),
    () => `${count} impressions after ${before} at a CPM of ${cpm}`,
  );
}

/** What the n-th billable impression of a campaign priced `cpm` costs (n from 1): F(n) − F(n − 1). */
export function cpmImpressionCost(cpm: Micros, n: number): Micros {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new MoneyRangeError(`an impression's number is ${n}, not a whole number from 1`);
  }
  return cpmRunCost(cpm, n - 1, 1);
}

function basisPoints(bps: number): number {
  if (!Number.isInteger(bps) || bps < 0 || bps > MAX_BASIS_POINTS) {
    throw new MoneyRangeError(
      `a revenue share is ${bps}, not a whole number of basis points from 0 to 10000`,
    );
  }
  return bps;
}

/**
 * A partner's earnings on `spend` micros of billable spend at `bps` basis points:
 * E(S) = floor(S · bps / 10000). Earnings on each further spend follow from it
 * ({@link revenueShareIncrement}), so they add up to exactly E of the total: no micro lost to rounding.
 */
export function revenueShareCumulative(bps: number, spend: Micros): Micros {
  basisPoints(bps);
  rate(spend, 'a spend');
  return wholeMicros(floorOfShare(spend, bps, MAX_BASIS_POINTS), () => `${bps} basis points of ${spend}`);
}

/**
 * A partner's earnings on `increment` micros of billable spend after `spendBefore` (its cumulative
 * billable spend so far, counted by the caller for as long as one share is in force):
 * E(S + x) − E(S). As with CPM, E(10000q + m) = q · bps + E(m), so it is taken from S modulo 10,000.
 * Spend only grows here; a refund or correction is an adjustment entry, not a negative increment.
 */
export function revenueShareIncrement(bps: number, spendBefore: Micros, increment: Micros): Micros {
  basisPoints(bps);
  rate(spendBefore, 'the spend before');
  rate(increment, 'a spend increment');
  rate(addMicros(spendBefore, increment), 'the spend after an increment');
  const s = spendBefore % MAX_BASIS_POINTS;
  return wholeMicros(
    difference(floorOfShare(s + increment, bps, MAX_BASIS_POINTS), floorOfShare(s, bps, MAX_BASIS_POINTS)),
    () => `${bps} basis points of ${increment} after ${spendBefore}`,
  );
}

// Currencies

/**
 * The ISO 4217 codes this Node knows (its ICU data): those it can name and give decimals for. A
 * later Node may drop a withdrawn code; a deployment on one would then refuse to start, saying so.
 */
const KNOWN_CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** What a currency code must be, after the name of the field or variable. */
export const CURRENCY_RULE =
  'must be an ISO 4217 currency code of three capital letters, such as USD, EUR or JPY';

/** True for an ISO 4217 code this Node knows, in capitals (`USD`, not `usd`). */
export function isCurrencyCode(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code);
}

const decimalsByCurrency = new Map<string, number>();

/**
 * The decimals a currency is shown with (JPY 0, USD 2, BHD 3), from the Unicode CLDR data Node's
 * Intl carries. Never more than 6, so a displayed amount is always a whole number of micros.
 */
export function currencyDecimals(currency: string): number {
  let decimals = decimalsByCurrency.get(currency);
  if (decimals === undefined) {
    if (!isCurrencyCode(currency)) throw new MoneyRangeError(`"${currency}" ${CURRENCY_RULE}`);
    const { maximumFractionDigits } = new Intl.NumberFormat('en', {
      style: 'currency',
      currency,
    }).resolvedOptions();
    if (maximumFractionDigits === undefined || maximumFractionDigits > 6) {
      throw new MoneyRangeError(`${currency} has ${maximumFractionDigits} decimals, more than micros hold`);
    }
    decimals = maximumFractionDigits;
    decimalsByCurrency.set(currency, decimals);
  }
  return decimals;
}

/** 10^k for k = 0 to 6, written out so that no power is computed. */
const POWERS_OF_TEN = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000] as const;

/** `1234567` as `1,234,567` (en-US). */
const groupThousands = (digits: string) => digits.replace(/\B(?=(\d{3})+$)/g, ',');

/**
 * `amount` with `decimals` decimals, thousands grouped (en-US), in string and integer arithmetic.
 * The micros past the last decimal shown round half away from zero (12.345 USD shows 12.35, −12.345
 * shows −12.35), for display only: the amount itself is never rounded, so shown amounts may not add
 * up to a shown total to the last digit. An amount that rounds to zero shows without a sign.
 */
function formatWithDecimals(amount: Micros, decimals: number): string {
  const step = POWERS_OF_TEN[6 - decimals] ?? 1;
  const magnitude = Math.abs(amount);
  const rest = magnitude % step;
  const shown = (magnitude - rest) / step + (rest * 2 >= step ? 1 : 0);
  const digits = String(shown).padStart(decimals + 1, '0');
  const whole = groupThousands(digits.slice(0, digits.length - decimals));
  const sign = amount < 0 && shown > 0 ? '-' : '';
  return decimals === 0 ? `${sign}${whole}` : `${sign}${whole}.${digits.slice(digits.length - decimals)}`;
}

/** `amount` as people read it in `currency`: its own decimals, thousands grouped: `12,345.68`. */
export function formatMoney(amount: Micros, currency: string): string {
  return formatWithDecimals(amount, currencyDecimals(currency));
}

/**
 * `amount` with its currency's code: `USD 12,345.68`, `JPY -1,200`. The code rather than a symbol:
 * `$` alone is a dozen currencies, and a code reads the same wherever it is shown.
 */
export function formatMoneyWithCode(amount: Micros, currency: string): string {
  return `${currency} ${formatMoney(amount, currency)}`;
}

/**
 * `amount` exactly, with as many decimals as it needs (none to 6) and thousands grouped: `1,000.25`,
 * `0.000001`. For a price a person typed, and for the bounds in messages; {@link parseMoney} reads it back.
 */
export function formatMicros(amount: Micros): string {
  return formatWithDecimals(amount, 6).replace(/\.?0+$/, '');
}

/** What an amount typed by a person may be. */
export interface MoneyInputRules {
  /** Take amounts below zero (an adjustment); otherwise `-5` is refused. */
  readonly allowNegative?: boolean;
  /** The largest amount taken; {@link MAX_MICROS} when not given. */
  readonly max?: Micros;
}

const AMOUNT_EXAMPLE = 'an amount such as 1,000.25';

/**
 * An amount a person typed (`12.5`, `1,000.25`, `0.000001`, `-3` where allowed) as micros, exactly,
 * or the problem with it, worded to follow the field's name (`price must not be negative`). Commas
 * may group thousands (en-US); the decimal separator is a point. Decimals past the sixth must be
 * zeros: a micro is the smallest amount. Surrounding spaces are ignored.
 */
export function readMoney(
  text: string,
  rules: MoneyInputRules = {},
): { micros: Micros } | { problem: string } {
  const shape = /^(-?)([\d,]*)(?:\.([\d,]*))?$/.exec(text.trim());
  if (shape === null) return { problem: `must be ${AMOUNT_EXAMPLE}` };
  const [, minus = '', whole = '', fraction = ''] = shape;
  if (!/\d/.test(whole + fraction))
    return { problem: text.trim() === '' ? `is required: ${AMOUNT_EXAMPLE}` : `must be ${AMOUNT_EXAMPLE}` };
  if (fraction.includes(',') || (whole.includes(',') && !/^\d{1,3}(,\d{3})+$/.test(whole))) {
    return {
      problem:
        'has a comma in the wrong place: commas go between thousands (1,000.25), a point before decimals',
    };
  }
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > 6) {
    return { problem: 'must have at most 6 decimals: the smallest amount is 0.000001' };
  }
  const magnitude = BigInt(`${whole.replaceAll(',', '') || '0'}${significant.padEnd(6, '0')}`);
  const value = minus === '-' ? -magnitude : magnitude;
  if (value < 0n && rules.allowNegative !== true) return { problem: 'must not be negative' };
  const max = rules.max ?? MAX_MICROS;
  if (value > BigInt(max)) return { problem: `must be at most ${formatMicros(max)}` };
  if (value < BigInt(MIN_MICROS)) return { problem: `must be at least ${formatMicros(MIN_MICROS)}` };
  return { micros: micros(value) };
}

/** {@link readMoney}, or a 400 naming `field` and its problem (`budget must not be negative`). */
export function parseMoney(text: string, field: string, rules: MoneyInputRules = {}): Micros {
  const read = readMoney(text, rules);
  if ('problem' in read) throw invalidField(field, read.problem);
  return read.micros;
}
