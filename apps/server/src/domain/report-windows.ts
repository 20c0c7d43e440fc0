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

/** A window as a report asks for it: whole periods up to and including the one now falls in. */
export interface WindowPlan {
  from: number;
  to: number;
  granularity: Granularity;
  /** The start of every period in the window, oldest first, so periods without events show as 0. */
  starts: number[];
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
  return { from, to, granularity: 'day', starts };
}
