/**
 * Partners' revenue shares (D18): a whole number of basis points (7,000 is 70%) from a billing date
 * on. What a share may be, when a dated share takes effect, and how it is shown and typed as a
 * percentage, in integers only, so that 70.05% is 7,005 basis points exactly.
 */
import { invalidField, unprocessable } from './errors.js';
import { MAX_BASIS_POINTS } from './money.js';
import { localDate, startOfLocalDay } from './time-zones.js';

const BASIS_POINTS_RULE = `must be a whole number of basis points from 0 to ${MAX_BASIS_POINTS} (7000 is 70%)`;

/** The basis points given, checked; otherwise a 400 naming `basisPoints`. */
export function checkBasisPoints(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_BASIS_POINTS) {
    throw invalidField('basisPoints', BASIS_POINTS_RULE);
  }
  return value;
}

/** A share as a percentage with two decimals (`7005` → `70.05`), from the integer, never a float. */
export function sharePercent(basisPoints: number): string {
  return `${Math.floor(basisPoints / 100)}.${String(basisPoints % 100).padStart(2, '0')}`;
}

/**
 * A percentage a person typed (`70`, `70.5`, `70.05`, `0.25`) as basis points, exactly, or the
 * problem with it, worded to follow the field's name. At most two decimals: a basis point is 0.01%.
 */
export function readSharePercent(text: string): { basisPoints: number } | { problem: string } {
  const shape = /^(\d{1,3})(?:\.(\d{0,2}))?%?$/.exec(text.trim());
  if (shape === null) {
    return text.trim() === ''
      ? { problem: 'is required: a percentage such as 70 or 70.05' }
      : { problem: 'must be a percentage from 0 to 100 with at most two decimals, such as 70 or 70.05' };
  }
  const basisPoints = Number(shape[1]) * 100 + Number((shape[2] ?? '').padEnd(2, '0'));
  if (basisPoints > MAX_BASIS_POINTS) return { problem: 'must be at most 100' };
  return { basisPoints };
}

const DATE_RULE = 'must be a date written YYYY-MM-DD, such as 2026-12-01';

/** A calendar date `YYYY-MM-DD` that exists (not 2026-02-30); otherwise a 400 naming `effectiveDate`. */
export function checkBillingDate(value: unknown): string {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (match === null) throw invalidField('effectiveDate', DATE_RULE);
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const asUtc = new Date(Date.UTC(year, month - 1, day));
  if (year < 1970 || asUtc.toISOString().slice(0, 10) !== value) {
    throw invalidField('effectiveDate', `${DATE_RULE}, and be a day of the calendar`);
  }
  return value;
}

/**
 * The instant a share dated `date` (checked by {@link checkBillingDate}) takes effect, set at `now`:
 * the start of that day in the billing time zone, or `now` itself for today, since earnings made
 * earlier today are already fixed. A day before today is refused (422): a share never rewrites
 * earnings already made.
 */
export function shareEffectiveFrom(date: string, now: number, timeZone: string): number {
  const today = localDate(now, timeZone);
  if (date < today) {
    throw unprocessable('invalid revenue share', [
      {
        field: 'effectiveDate',
        message: `must be today (${today}, ${timeZone}) or later: earnings already made never change`,
      },
    ]);
  }
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return Math.max(startOfLocalDay(year, month, day, timeZone), now);
}
