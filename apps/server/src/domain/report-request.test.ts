import { describe, expect, it } from 'vitest';
import { DomainError } from './errors.js';
import { parseReportRequest } from './report-request.js';

const NOW = Date.parse('2026-11-22T15:20:30Z');
const parse = (params: Record<string, unknown>) => parseReportRequest(params, NOW);
const message = (params: Record<string, unknown>): string => {
  try {
    parse(params);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'invalid') return error.message;
    throw error;
  }
  throw new Error('no error');
};

describe('report requests', () => {
  it('defaults to today (UTC) by day, ungrouped, up to the current minute', () => {
    expect(parse({})).toEqual({
      from: Date.parse('2026-11-22T00:00:00Z'),
      to: Date.parse('2026-11-22T15:21:00Z'),
      granularity: 'day',
      timeZone: 'UTC',
      groupBy: [],
      filters: {},
    });
  });

  it('reads dates as local midnights in the time zone, a `to` date including its whole day', () => {
    const request = parse({ from: '2026-11-01', to: '2026-11-02', timeZone: 'Europe/Paris' });
    expect(new Date(request.from).toISOString()).toBe('2026-10-31T23:00:00.000Z');
    expect(new Date(request.to).toISOString()).toBe('2026-11-02T23:00:00.000Z');
  });

  it('reads ISO date-times with an offset and widens them to whole minutes', () => {
    const request = parse({ from: '2026-11-20T10:00:30+01:00', to: '2026-11-20T10:05:10Z' });
    expect(new Date(request.from).toISOString()).toBe('2026-11-20T09:00:00.000Z');
    expect(new Date(request.to).toISOString()).toBe('2026-11-20T10:06:00.000Z');
  });

  it('parses grouping and filters, with `none` for an absent country or device', () => {
    const request = parse({
      groupBy: 'campaign, country,campaign',
      campaign: '3,4',
      country: 'us,none',
      device: 'mobile',
      placement: 'header_banner',
    });
    expect(request.groupBy).toEqual(['campaign', 'country']);
    expect(request.filters).toEqual({
      campaign: [3, 4],
      country: ['US', ''],
      device: ['mobile'],
      placement: ['header_banner'],
    });
  });

  it('refuses bad input with a clear message', () => {
    expect(message({ timeZone: 'Mars/Olympus' })).toBe(
      'timeZone must be an IANA time zone such as "Europe/Paris"',
    );
    expect(message({ granularity: 'week' })).toBe('granularity must be one of: minute, hour, day');
    expect(message({ from: '2026-11-20T10:00:00' })).toMatch(/^from must be a date/);
    expect(message({ from: '2026-02-30' })).toBe('from is not a valid date');
    expect(message({ from: '2026-11-22', to: '2026-11-21' })).toBe('from must be before to');
    expect(message({ groupBy: 'campaign,colour' })).toMatch(/^groupBy must be a list of: campaign/);
    expect(message({ campaign: 'x' })).toBe('campaign must be a list of positive integers');
    expect(message({ country: 'XX' })).toBe('location must be an ISO 3166-1 alpha-2 country code');
    expect(message({ from: '2026-01-01', granularity: 'minute' })).toMatch(/at most 31 days/);
    expect(message({ from: ['2026-01-01', '2026-01-02'] })).toBe('from must be given once');
  });
});
