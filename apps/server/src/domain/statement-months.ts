// Billing months (D18): calendar months in the billing time zone, named `YYYY-MM`, the periods
// statements are issued for.
import { invalidField } from './errors.js';
import { localDate, startOfLocalDay } from './time-zones.js';

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** A month as typed (`2026-03`), checked; anything else is a 400 naming `field`. */
export function checkMonth(value: unknown, field = 'month'): string {
  if (typeof value !== 'string' || !MONTH.test(value.trim()))
    throw invalidField(field, 'must be a month, YYYY-MM, such as 2026-03');
  return value.trim();
}

/** The month an instant falls in, in `timeZone`. */
export const monthOf = (ms: number, timeZone: string): string => localDate(ms, timeZone).slice(0, 7);

/** The month after `month`. */
export function nextMonth(month: string): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return number === 12 ? `${year + 1}-01` : `${year}-${String(number + 1).padStart(2, '0')}`;
}

/** The instants `month` starts and ends (its next month's start) in `timeZone`: `[start, end)`. */
export function monthPeriod(month: string, timeZone: string): { start: number; end: number } {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return {
    start: startOfLocalDay(year, number, 1, timeZone),
    end: startOfLocalDay(year, number + 1, 1, timeZone),
  };
}

/** Every month from `first` through `last`, in order (none when `last` comes before `first`). */
export function monthsBetween(first: string, last: string): string[] {
  const months: string[] = [];
  for (let month = first; month <= last; month = nextMonth(month)) months.push(month);
  return months;
}
