import { invalidField } from './errors.js';
import {
  localDate,
  startOfLocalDay,
  startOfLocalHour,
  startOfNextLocalDay,
  type Granularity,
} from './time-zones.js';

/** The spans of time the dashboard's reports offer, each with the period its rows cover. */
export const REPORT_WINDOWS = ['hour', 'day', 'week', 'month', 'quarter'] as const;
export type ReportWindow = (typeof REPORT_WINDOWS)[number];

export const REPORT_WINDOW_LABELS: Record<ReportWindow, string> = {
  hour: 'Last hour, by minute',
  day: 'Last 24 hours, by hour',
  week: 'Last 7 days, by day',
  month: 'Last 30 days, by day',
  quarter: 'Last 90 days, by day',
};

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAYS: Record<'week' | 'month' | 'quarter', number> = { week: 7, month: 30, quarter: 90 };

/** The dashboard's other choice: the local days from one date to another, both included. */
export const DATES = 'dates';
export const DATES_LABEL = 'Between two dates';
/** The most days a report by dates covers: a year, a leap day included. */
export const MAX_REPORT_DAYS = 366;

/** A window as a report asks for it: whole periods up to and including the one now falls in. */
export interface WindowPlan {
  from: number;
  to: number;
  granularity: Granularity;
  /** The start of every period in the window, oldest first, so periods without events show as 0. */
  starts: number[];
  /** How many local days it covers, when it is made of whole local days. */
  days?: number;
}

/**
 * The periods of `window` ending with the current one, in `timeZone` (D12): the last 60 minutes,
 * the last 24 local hours, or the last 7, 30 or 90 local days (a day that daylight saving
 * shortens or lengthens is still one day).
 */
export function planWindow(window: ReportWindow, now: number, timeZone: string): WindowPlan {
  const starts: number[] = [];
  if (window === 'hour' || window === 'day') {
    const step = window === 'hour' ? MINUTE : HOUR;
    const current = window === 'hour' ? Math.floor(now / MINUTE) * MINUTE : startOfLocalHour(now, timeZone);
    const count = window === 'hour' ? 60 : 24;
    for (let i = count - 1; i >= 0; i--) starts.push(current - i * step);
    return {
      from: starts[0]!,
      to: current + step,
      granularity: window === 'hour' ? 'minute' : 'hour',
      starts,
    };
  }
  const [y, m, d] = localDate(now, timeZone).split('-').map(Number) as [number, number, number];
  const from = startOfLocalDay(y, m, d - (DAYS[window] - 1), timeZone);
  const to = startOfNextLocalDay(now, timeZone);
  for (let start = from; start < to; start = startOfNextLocalDay(start, timeZone)) starts.push(start);
  return { from, to, granularity: 'day', starts, days: DAYS[window] };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` as its parts, refused (naming `field`) if it is not one. */
function dateParts(value: string, field: 'from' | 'to'): [number, number, number] {
  const match = DATE.exec(value);
  const [y, m, d] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const check = new Date(Date.UTC(y, m - 1, d));
  if (!match || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d)
    throw invalidField(field, 'must be a date (YYYY-MM-DD)');
  return [y, m, d];
}

/**
 * The local days from `from` to `to` (dates, both included) in `timeZone` (D12): one day by hour,
 * longer spans by day, at most `MAX_REPORT_DAYS`.
 */
export function planDates(from: string, to: string, timeZone: string): WindowPlan {
  const [fy, fm, fd] = dateParts(from, 'from');
  const [ty, tm, td] = dateParts(to, 'to');
  if (to < from) throw invalidField('to', 'must be the same day as from or later');
  const days = Math.round((Date.UTC(ty, tm - 1, td) - Date.UTC(fy, fm - 1, fd)) / 86_400_000) + 1;
  if (days > MAX_REPORT_DAYS)
    throw invalidField('to', `must be at most ${MAX_REPORT_DAYS} days after from, counting both`);
  const start = startOfLocalDay(fy, fm, fd, timeZone);
  const end = startOfLocalDay(ty, tm, td + 1, timeZone);
  const starts: number[] = [];
  if (days === 1) {
    for (let hour = start; hour < end; hour += HOUR) starts.push(hour);
    return { from: start, to: end, granularity: 'hour', starts, days };
  }
  for (let day = start; day < end; day = startOfNextLocalDay(day, timeZone)) starts.push(day);
  return { from: start, to: end, granularity: 'day', starts, days };
}

/**
 * The period of the same length just before `plan`: as many local days before a plan of whole days
 * (a week with a daylight-saving change is compared with the week before, however many hours
 * either has), the same span of time before the others.
 */
export function previousPeriod(plan: WindowPlan, timeZone: string): { from: number; to: number } {
  if (plan.days === undefined) return { from: plan.from - (plan.to - plan.from), to: plan.from };
  const [y, m, d] = localDate(plan.from, timeZone).split('-').map(Number) as [number, number, number];
  return { from: startOfLocalDay(y, m, d - plan.days, timeZone), to: plan.from };
}

/** The local dates a plan covers, its first and its last, as the date fields show them. */
export function datesOf(plan: WindowPlan, timeZone: string): { from: string; to: string } {
  return { from: localDate(plan.from, timeZone), to: localDate(plan.to - 1, timeZone) };
}
