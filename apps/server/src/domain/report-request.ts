import { invalidField } from './errors.js';
import { idFromText } from './ids.js';
import { parseDevice, parseLocation } from './targeting.js';
import { isTimeZone, startOfLocalDay, type Granularity } from './time-zones.js';
import { REASON_VALUES, VERDICTS } from './verdicts.js';

/** What a report can be grouped and filtered by (the rollups' dimensions, plus the advertiser). */
export const REPORT_DIMENSIONS = [
  'campaign',
  'advertiser',
  'partner',
  'placement',
  'country',
  'device',
  'verdict',
  'reason',
] as const;
export type ReportDimension = (typeof REPORT_DIMENSIONS)[number];

export const GRANULARITIES: readonly Granularity[] = ['minute', 'hour', 'day'];

/** Minute rows over longer ranges are better asked for by hour. */
const MAX_MINUTE_RANGE_MS = 31 * 24 * 60 * 60 * 1000;

/** A validated report request: whole minutes from `from` (inclusive) to `to` (exclusive). */
export interface ReportRequest {
  from: number;
  to: number;
  granularity: Granularity;
  timeZone: string;
  groupBy: ReportDimension[];
  /** Values as stored: ids as numbers, '' for an absent country, device or reason. */
  filters: Partial<Record<ReportDimension, (string | number)[]>>;
}

const MINUTE = 60_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 date-time with a mandatory offset, so an instant never depends on the server's zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

function text(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalidField(name, 'must be given once');
  return value;
}

/**
 * `from`/`to` as an instant: an ISO 8601 date-time with offset, or a date meaning local midnight
 * in the report's time zone. A date as `to` includes that whole day.
 */
function instant(value: string, name: 'from' | 'to', timeZone: string): number {
  const date = DATE.exec(value);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const check = new Date(Date.UTC(year, month - 1, day));
    if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day)
      throw invalidField(name, 'is not a valid date');
    return startOfLocalDay(year, month, name === 'to' ? day + 1 : day, timeZone);
  }
  const ms = INSTANT.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw invalidField(name, 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time with an offset');
  }
  return ms;
}

function oneOf(name: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) throw invalidField(name, `must be a list of: ${allowed.join(', ')}`);
  return value;
}

function filterValues(dimension: ReportDimension, raw: string): (string | number)[] {
  return raw.split(',').map((item) => {
    const value = item.trim();
    switch (dimension) {
      case 'campaign':
      case 'advertiser':
      case 'partner': {
        const id = idFromText(value);
        if (id === undefined) throw invalidField(dimension, 'must be a list of positive integers');
        return id;
      }
      case 'placement':
        if (value === '') throw invalidField('placement', 'must not be empty');
        return value;
      case 'country':
        return value === 'none' ? '' : parseLocation(value);
      case 'device':
        return value === 'none' ? '' : parseDevice(value);
      case 'verdict':
        return oneOf('verdict', value, VERDICTS);
      case 'reason':
        return value === 'none' ? '' : oneOf('reason', value, REASON_VALUES);
    }
  });
}

/**
 * Validates report parameters given as strings (query string or command-line options):
 * `from`, `to`, `granularity` (minute, hour, day; default day), `timeZone` (IANA; default UTC),
 * `groupBy` (a comma-separated list of dimensions) and one filter per dimension (a comma-separated
 * list; `none` matches an absent country or device, or an event without a reason). Defaults: from the start of today to now.
 */
export function parseReportRequest(params: Record<string, unknown>, now: number): ReportRequest {
  const timeZone = text(params, 'timeZone') ?? 'UTC';
  if (!isTimeZone(timeZone))
    throw invalidField('timeZone', 'must be an IANA time zone such as "Europe/Paris"');

  const granularity = (text(params, 'granularity') ?? 'day') as Granularity;
  if (!GRANULARITIES.includes(granularity))
    throw invalidField('granularity', 'must be one of: minute, hour, day');

  const rawFrom = text(params, 'from');
  const rawTo = text(params, 'to');
  const today = new Intl.DateTimeFormat('en-CA', { timeZone }).format(now);
  const from = instant(rawFrom ?? today, 'from', timeZone);
  // By default up to now, the current minute included.
  const to = rawTo === undefined ? now + 1 : instant(rawTo, 'to', timeZone);
  // Rollups count whole minutes: the range is widened to the minutes it touches.
  const fromMinute = Math.floor(from / MINUTE) * MINUTE;
  const toMinute = Math.ceil(to / MINUTE) * MINUTE;
  if (fromMinute >= toMinute) throw invalidField('from', 'must be before to');
  if (granularity === 'minute' && toMinute - fromMinute > MAX_MINUTE_RANGE_MS) {
    throw invalidField('granularity', 'must be hour or day: a report by minute covers at most 31 days');
  }

  const groupBy: ReportDimension[] = [];
  for (const item of (text(params, 'groupBy') ?? '').split(',')) {
    const dimension = item.trim();
    if (dimension === '') continue;
    if (!(REPORT_DIMENSIONS as readonly string[]).includes(dimension)) {
      throw invalidField('groupBy', `must be a list of: ${REPORT_DIMENSIONS.join(', ')}`);
    }
    if (!groupBy.includes(dimension as ReportDimension)) groupBy.push(dimension as ReportDimension);
  }

  const filters: ReportRequest['filters'] = {};
  for (const dimension of REPORT_DIMENSIONS) {
    const raw = text(params, dimension);
    if (raw !== undefined) filters[dimension] = filterValues(dimension, raw);
  }
  return { from: fromMinute, to: toMinute, granularity, timeZone, groupBy, filters };
}
