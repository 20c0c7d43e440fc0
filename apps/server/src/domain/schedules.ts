import type { FieldProblem } from './errors.js';
import { localHourOfWeek } from './time-zones.js';

/**
 * Dayparting: the hours of the week a campaign may run, in its own time zone. A schedule names the
 * days it runs on, each with hour ranges `[from, to]` (from the start of hour `from` to the start of
 * hour `to`; 24 is midnight at the day's end), such as `{ "mon": [[9, 17]], "sat": [[10, 14]] }`. A
 * day left out is a day it does not run; no schedule (null) runs at every hour.
 *
 * Across a daylight-saving change the local clock decides: an hour the clocks skip does not happen,
 * so it is not run, and an hour they repeat is run both times.
 */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `[from, to]`: from the start of hour `from` (0 to 23) to the start of hour `to` (1 to 24). */
export type HourRange = readonly [number, number];
export type Schedule = Partial<Record<Weekday, HourRange[]>>;

export const HOURS_IN_WEEK = 168;

/** An example for messages and documentation. */
export const SCHEDULE_EXAMPLE = '{"mon": [[9, 17]], "sat": [[10, 14]]}';

const RANGE_MESSAGE =
  'must be [from, to]: whole hours with 0 <= from < to <= 24 (to is the hour it stops; 24 is midnight)';

const isHour = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/** Sorted, with overlapping and touching ranges joined: `[[9, 12], [11, 17]]` is `[[9, 17]]`. */
function joined(ranges: readonly HourRange[]): HourRange[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const result: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = result[result.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else result.push([from, to]);
  }
  return result;
}

/**
 * A schedule as the management API takes it: null or left out (every hour), or an object of
 * weekdays, each a list of hour ranges. Problems are added under `path`, naming the day or range at
 * fault. The result is normalised: days in week order, ranges sorted and joined, days without an
 * hour left out.
 */
export function readSchedule(value: unknown, path: string, problems: FieldProblem[]): Schedule | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push({
      field: path,
      message: `must be null (every hour) or an object of weekdays (mon to sun), each a list of [from, to] hour ranges, such as ${SCHEDULE_EXAMPLE}`,
    });
    return null;
  }
  const sent = value as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(sent).filter((key) => !(WEEKDAYS as readonly string[]).includes(key)))
    problems.push({ field: `${path}.${key}`, message: `is not a weekday: use ${WEEKDAYS.join(', ')}` });
  const schedule: Schedule = {};
  for (const day of WEEKDAYS) {
    const ranges = sent[day];
    if (ranges === undefined) continue;
    if (!Array.isArray(ranges)) {
      problems.push({
        field: `${path}.${day}`,
        message: 'must be a list of [from, to] hour ranges, such as [[9, 17]]',
      });
      continue;
    }
    const valid: HourRange[] = [];
    ranges.forEach((range: unknown, i) => {
      const ok =
        Array.isArray(range) &&
        range.length === 2 &&
        isHour(range[0], 0, 23) &&
        isHour(range[1], 1, 24) &&
        range[0] < range[1];
      if (ok) valid.push([range[0] as number, range[1] as number]);
      else problems.push({ field: `${path}.${day}[${i}]`, message: RANGE_MESSAGE });
    });
    if (valid.length > 0) schedule[day] = joined(valid);
  }
  if (problems.length > before) return null;
  if (Object.keys(schedule).length === 0) {
    problems.push({ field: path, message: 'must allow at least one hour (null runs at every hour)' });
    return null;
  }
  return schedule;
}

/**
 * The hours of the week a schedule runs, as a bitset of 168 bits (bit `d × 24 + h` for hour `h` of
 * weekday `d`, Monday 0): what fetch tests per campaign, one bit per request.
 */
export function weekHours(schedule: Schedule): Uint32Array {
  const bits = new Uint32Array(Math.ceil(HOURS_IN_WEEK / 32));
  WEEKDAYS.forEach((day, d) => {
    for (const [from, to] of schedule[day] ?? [])
      for (let hour = from; hour < to; hour++) {
        const at = d * 24 + hour;
        bits[at >>> 5] = (bits[at >>> 5] as number) | (1 << (at & 31));
      }
  });
  return bits;
}

export const runsInHour = (bits: Uint32Array, hourOfWeek: number): boolean =>
  ((bits[hourOfWeek >>> 5] as number) & (1 << (hourOfWeek & 31))) !== 0;

/** Every UTC offset in use, and every daylight-saving change, falls on a quarter hour. */
const QUARTER_HOUR = 15 * 60_000;

/**
 * The local hour of the week in one time zone, worked out once per UTC quarter hour and kept: every
 * instant of a UTC quarter hour has the same local hour, so fetch pays for the time-zone maths once
 * per zone and quarter hour, not per campaign and request.
 */
export class WeekClock {
  private quarter = Number.NaN;
  private hour = 0;

  constructor(readonly timeZone: string) {}

  hourOfWeek(ms: number): number {
    const quarter = Math.floor(ms / QUARTER_HOUR);
    if (quarter !== this.quarter) {
      this.hour = localHourOfWeek(quarter * QUARTER_HOUR, this.timeZone);
      this.quarter = quarter;
    }
    return this.hour;
  }
}

/** One clock per time zone, shared by every campaign in it. */
export class WeekClocks {
  private readonly clocks = new Map<string, WeekClock>();

  of(timeZone: string): WeekClock {
    let clock = this.clocks.get(timeZone);
    if (!clock) this.clocks.set(timeZone, (clock = new WeekClock(timeZone)));
    return clock;
  }
}

/** Whether a campaign with `schedule` (null: every hour) may run at `ms` in `timeZone`. */
export function runsAt(schedule: Schedule | null, ms: number, timeZone: string): boolean {
  return schedule === null || runsInHour(weekHours(schedule), localHourOfWeek(ms, timeZone));
}

/**
 * The first instant after `ms` at which a campaign with `schedule` runs (it starts a quarter hour
 * in its hours), within the next 8 days; null when it never runs in them, as a schedule whose only
 * hour is one daylight saving skips that week.
 */
export function nextRunAt(schedule: Schedule, ms: number, timeZone: string): number | null {
  const bits = weekHours(schedule);
  const first = (Math.floor(ms / QUARTER_HOUR) + 1) * QUARTER_HOUR;
  for (let at = first; at < first + 8 * 24 * 3_600_000; at += QUARTER_HOUR)
    if (runsInHour(bits, localHourOfWeek(at, timeZone))) return at;
  return null;
}

const DAY_RANGE = /^([a-z]{3})(?:-([a-z]{3}))?$/;
const HOUR_RANGE = /^(\d{1,2})-(\d{1,2})$/;

/** Hour ranges as people type them, `9-17, 19-22`, in the API's form (checked by `readSchedule`). */
export function hourRangesFromText(text: string): number[][] | undefined {
  const ranges: number[][] = [];
  for (const part of text.split(',').map((item) => item.trim())) {
    const match = HOUR_RANGE.exec(part);
    if (!match) return undefined;
    ranges.push([Number(match[1]), Number(match[2])]);
  }
  return ranges;
}

/** Hour ranges as people read and type them: `9-17, 19-22`. */
export const hourRangesText = (ranges: readonly HourRange[]): string =>
  ranges.map(([from, to]) => `${from}-${to}`).join(', ');

/**
 * A schedule as typed on the command line, `mon-fri 9-17; sat 10-14,18-22`, in the API's form:
 * groups separated by `;`, each days (`mon`, `mon-fri`) and hour ranges. Empty or `always`: null.
 * Throws a message naming what it could not read.
 */
export function scheduleFromText(text: string): Record<string, number[][]> | null {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === '' || trimmed === 'always') return null;
  const schedule: Record<string, number[][]> = {};
  for (const group of trimmed.split(';').map((item) => item.trim())) {
    const [days = '', ...hours] = group.split(/\s+/);
    const dayMatch = DAY_RANGE.exec(days);
    const first = WEEKDAYS.indexOf(dayMatch?.[1] as Weekday);
    const last = dayMatch?.[2] === undefined ? first : WEEKDAYS.indexOf(dayMatch[2] as Weekday);
    const ranges = hourRangesFromText(hours.join(''));
    if (first < 0 || last < first || ranges === undefined)
      throw new Error(`cannot read "${group}": write days and hours such as "mon-fri 9-17; sat 10-14"`);
    for (const day of WEEKDAYS.slice(first, last + 1)) (schedule[day] ??= []).push(...ranges);
  }
  return schedule;
}

/** A schedule in words, the form `scheduleFromText` reads: `mon-fri 9-17; sat 10-14`, or `every hour`. */
export function scheduleText(schedule: Schedule | null): string {
  if (schedule === null) return 'every hour';
  const groups: { from: Weekday; to: Weekday; hours: string }[] = [];
  WEEKDAYS.forEach((day, d) => {
    const ranges = schedule[day];
    if (ranges === undefined) return;
    const hours = hourRangesText(ranges).replace(/, /g, ',');
    const last = groups[groups.length - 1];
    if (last !== undefined && last.hours === hours && WEEKDAYS.indexOf(last.to) === d - 1) last.to = day;
    else groups.push({ from: day, to: day, hours });
  });
  return groups.map(({ from, to, hours }) => `${from === to ? from : `${from}-${to}`} ${hours}`).join('; ');
}
