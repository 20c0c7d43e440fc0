/**
 * Calendar days in an IANA time zone (rule D12), for daily caps. Built on Intl, so it follows
 * the time-zone database that Node ships, daylight-saving changes included.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

export function isTimeZone(value: string): boolean {
  try {
    formatter(value);
    return true;
  } catch {
    return false;
  }
}

function wallClock(
  ms: number,
  timeZone: string,
): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(ms)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    y: parts['year']!,
    m: parts['month']!,
    d: parts['day']!,
    h: parts['hour']!,
    min: parts['minute']!,
    s: parts['second']!,
  };
}

/** Local date `YYYY-MM-DD` of an instant in a time zone. */
export function localDate(ms: number, timeZone: string): string {
  const { y, m, d } = wallClock(ms, timeZone);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Local wall time minus UTC, in ms, at an instant. */
function offset(ms: number, timeZone: string): number {
  const { y, m, d, h, min, s } = wallClock(ms, timeZone);
  return Date.UTC(y, m - 1, d, h, min, s) - Math.floor(ms / 1000) * 1000;
}

const HOUR = 3_600_000;

/**
 * The instant a local calendar day begins: its local midnight, or, where daylight saving skips
 * midnight (America/Santiago on 2026-09-06, America/Havana in March), the instant the clocks jump
 * into the day. Where midnight happens twice, the first one. Out-of-range days roll over like
 * `Date.UTC` (day 32 of January is 1 February).
 */
export function startOfLocalDay(year: number, month: number, day: number, timeZone: string): number {
  const midnightAsUtc = Date.UTC(year, month - 1, day);
  const date = new Date(midnightAsUtc).toISOString().slice(0, 10);
  const begun = (ms: number): boolean => localDate(ms, timeZone) >= date;
  // Usually midnight: the offset at the estimate can differ from the one at midnight across a
  // daylight-saving change, hence two rounds.
  let guess = midnightAsUtc - offset(midnightAsUtc, timeZone);
  guess = midnightAsUtc - offset(guess, timeZone);
  if (begun(guess) && !begun(guess - 1)) return guess;
  // Midnight does not exist that day: search for the jump. Offsets lie within -12:00 and +14:00,
  // so the day begins between these bounds even when a whole day is skipped.
  let before = midnightAsUtc - 40 * HOUR;
  let after = midnightAsUtc + 40 * HOUR;
  while (after - before > 1) {
    const middle = before + Math.floor((after - before) / 2);
    if (begun(middle)) after = middle;
    else before = middle;
  }
  return after;
}

/**
 * The instant a wall-clock time in `timeZone` names (`2026-12-01T09:00` in Europe/Paris is 08:00
 * UTC). A time that daylight saving skips is read with the offset before the jump; one that
 * happens twice, as its first occurrence.
 */
export function instantOfLocalTime(localTime: string, timeZone: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(localTime);
  if (!match) return undefined;
  const [y, m, d, h, min] = match.slice(1).map(Number) as [number, number, number, number, number];
  const asUtc = Date.UTC(y, m - 1, d, h, min);
  let guess = asUtc - offset(asUtc, timeZone);
  guess = asUtc - offset(guess, timeZone);
  return guess;
}

/** The instant the local hour `ms` falls in began (offsets are whole quarter hours, so its minute 0). */
export function startOfLocalHour(ms: number, timeZone: string): number {
  const { min } = wallClock(ms, timeZone);
  return Math.floor(ms / 60_000) * 60_000 - min * 60_000;
}

/** The local hour of day (0 to 23) an instant falls in. */
export function localHour(ms: number, timeZone: string): number {
  return wallClock(ms, timeZone).h;
}

/**
 * The local hour of the week an instant falls in: 0 is Monday 00:00 to 01:00, 167 Sunday 23:00 to
 * midnight. Across a daylight-saving change each instant has one: a skipped hour has none, and both
 * runs of a repeated hour have the same.
 */
export function localHourOfWeek(ms: number, timeZone: string): number {
  const { y, m, d, h } = wallClock(ms, timeZone);
  // getUTCDay counts from Sunday (0); the week here starts on Monday.
  const weekday = (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7;
  return weekday * 24 + h;
}

/** The instant the local day `ms` falls in began (see `startOfLocalDay`). */
export function startOfThisLocalDay(ms: number, timeZone: string): number {
  const { y, m, d } = wallClock(ms, timeZone);
  return startOfLocalDay(y, m, d, timeZone);
}

/** The instant the local day after the one `ms` falls in begins; always later than `ms`. */
export function startOfNextLocalDay(ms: number, timeZone: string): number {
  const { y, m, d } = wallClock(ms, timeZone);
  return startOfLocalDay(y, m, d + 1, timeZone);
}

export type Granularity = 'minute' | 'hour' | 'day';

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function offsetLabel(ms: number, timeZone: string): string {
  const minutes = Math.round(offset(ms, timeZone) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * The local period (D12) an instant falls in, as a sortable label: `YYYY-MM-DD` for a day, and
 * `YYYY-MM-DDTHH:mm±hh:mm` for an hour or a minute (the offset in force at the period's start, so
 * the two 01:00 hours of a daylight-saving change stay apart).
 */
export function localPeriod(ms: number, granularity: Granularity, timeZone: string): string {
  const { y, m, d, h, min, s } = wallClock(ms, timeZone);
  const date = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  if (granularity === 'day') return date;
  const minuteStart = ms - s * 1000 - (ms % 1000);
  const start = granularity === 'hour' ? minuteStart - min * 60_000 : minuteStart;
  const minute = granularity === 'hour' ? 0 : min;
  return `${date}T${pad(h)}:${pad(minute)}${offsetLabel(start, timeZone)}`;
}
