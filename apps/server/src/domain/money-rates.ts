import { formatMoney, micros, MoneyRangeError, type Micros } from './money.js';

/**
 * Money per unit of delivery, as reports show it: the effective cost per thousand billable
 * impressions (eCPM) and per billable click (eCPC), floored to the micro in integer arithmetic. A
 * float quotient would be wrong by a micro whenever it rounds, and past 2^53 (a spend of 9 million
 * units times 1,000) would not even hold the dividend.
 */

/** Impressions an eCPM is per: a thousand. */
const PER_THOUSAND = 1_000;

/**
 * floor(dividend · multiplier / divisor), exactly, for safe integers (`divisor` > 0; the product may
 * pass 2^53, the quotient may not). Where the product is a safe integer it is floored in numbers;
 * otherwise in bigint, whose division truncates toward zero and is turned into a floor for a
 * negative quotient with a remainder.
 */
export function floorOfProduct(dividend: number, multiplier: number, divisor: number): number {
  for (const [value, what] of [
    [dividend, 'a dividend'],
    [multiplier, 'a multiplier'],
    [divisor, 'a divisor'],
  ] as const) {
    if (!Number.isSafeInteger(value)) throw new MoneyRangeError(`${what} is ${value}, not a safe integer`);
  }
  if (divisor <= 0) throw new MoneyRangeError(`a divisor is ${divisor}, not above zero`);
  const product = dividend * multiplier;
  if (Number.isSafeInteger(product)) {
    // The remainder taken to [0, divisor): product − remainder is a multiple of divisor, and so
    // divides exactly. A product past 2^53 − 1 rounds to 2^53 or more, so the check sees it.
    const remainder = product % divisor < 0 ? (product % divisor) + divisor : product % divisor;
    const multiple = product - remainder;
    if (Number.isSafeInteger(multiple)) return multiple / divisor;
  }
  const numerator = BigInt(dividend) * BigInt(multiplier);
  const big = BigInt(divisor);
  const truncated = numerator / big;
  const quotient = numerator % big !== 0n && numerator < 0n ? truncated - 1n : truncated;
  if (quotient > BigInt(Number.MAX_SAFE_INTEGER) || quotient < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new MoneyRangeError(`${dividend} × ${multiplier} / ${divisor} is ${quotient}, past a safe integer`);
  }
  return Number(quotient);
}

/**
 * What a thousand billable impressions cost on average: floor(spend · 1000 / impressions) micros;
 * null without impressions. Spend includes what clicks cost: it is what the impressions brought in.
 * Throws {@link MoneyRangeError} for an eCPM past the largest amount (a click costing millions on a
 * handful of impressions) rather than showing a wrong one.
 */
export function effectiveCpm(spend: Micros, impressions: number): Micros | null {
  if (impressions === 0) return null;
  return micros(floorOfProduct(spend, PER_THOUSAND, impressions));
}

/** What a billable click cost on average: floor(spend / clicks) micros; null without clicks. */
export function effectiveCpc(spend: Micros, clicks: number): Micros | null {
  if (clicks === 0) return null;
  return micros(floorOfProduct(spend, 1, clicks));
}

/**
 * An amount as a data file carries it (CSV, the CLI's table): in units with the currency's own
 * decimals (as {@link formatMoney} rounds them for display) and without thousands separators, so
 * that a spreadsheet reads it as a number and no comma needs quoting: `12345.68`, `1200` in JPY.
 */
export function moneyFigure(amount: Micros, currency: string): string {
  return formatMoney(amount, currency).replaceAll(',', '');
}
