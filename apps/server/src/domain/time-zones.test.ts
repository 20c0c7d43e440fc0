import { describe, expect, it } from 'vitest';
import { isTimeZone, localDate, localPeriod, startOfLocalDay, startOfNextLocalDay } from './time-zones.js';

describe('local days in IANA time zones (D12)', () => {
  it('knows time zones', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });

  it('gives the local date of an instant', () => {
    const instant = Date.parse('2026-03-01T23:30:00Z');
    expect(localDate(instant, 'UTC')).toBe('2026-03-01');
    expect(localDate(instant, 'Asia/Tokyo')).toBe('2026-03-02');
    expect(localDate(instant, 'America/Los_Angeles')).toBe('2026-03-01');
  });

  it.each([
    ['UTC', '2026-03-01T10:00:00Z', '2026-03-02T00:00:00.000Z'],
    ['Asia/Tokyo', '2026-03-01T10:00:00Z', '2026-03-01T15:00:00.000Z'],
    ['Asia/Kolkata', '2026-03-01T10:00:00Z', '2026-03-01T18:30:00.000Z'],
    ['America/New_York', '2026-03-01T10:00:00Z', '2026-03-02T05:00:00.000Z'],
    // The night clocks go forward in New York (8 March 2026): midnight is still 05:00 UTC, the
    // following midnight is 04:00 UTC.
    ['America/New_York', '2026-03-08T12:00:00Z', '2026-03-09T04:00:00.000Z'],
    ['Europe/London', '2026-10-25T12:00:00Z', '2026-10-26T00:00:00.000Z'],
  ])('in %s, the day after %s starts at %s', (zone, instant, expected) => {
    expect(new Date(startOfNextLocalDay(Date.parse(instant), zone)).toISOString()).toBe(expected);
  });
});

describe('report periods (D12)', () => {
  it('labels days, hours and minutes in the asked time zone', () => {
    const instant = Date.parse('2026-03-01T23:30:45Z');
    expect(localPeriod(instant, 'day', 'UTC')).toBe('2026-03-01');
    expect(localPeriod(instant, 'day', 'Asia/Tokyo')).toBe('2026-03-02');
    expect(localPeriod(instant, 'hour', 'Asia/Tokyo')).toBe('2026-03-02T08:00+09:00');
    expect(localPeriod(instant, 'minute', 'America/New_York')).toBe('2026-03-01T18:30-05:00');
    // Offsets that are not whole hours keep their local hour boundaries.
    expect(localPeriod(instant, 'hour', 'Asia/Kathmandu')).toBe('2026-03-02T05:00+05:45');
  });

  it('keeps the two 01:00 hours of a daylight-saving change apart', () => {
    // New York falls back on 2026-11-01: 01:00-02:00 happens at -04:00 and again at -05:00.
    const first = Date.parse('2026-11-01T05:30:00Z');
    const second = Date.parse('2026-11-01T06:30:00Z');
    expect(localPeriod(first, 'hour', 'America/New_York')).toBe('2026-11-01T01:00-04:00');
    expect(localPeriod(second, 'hour', 'America/New_York')).toBe('2026-11-01T01:00-05:00');
  });

  it('finds the start of a local day, across a daylight-saving change', () => {
    expect(new Date(startOfLocalDay(2026, 11, 1, 'America/New_York')).toISOString()).toBe(
      '2026-11-01T04:00:00.000Z',
    );
    expect(new Date(startOfLocalDay(2026, 11, 2, 'America/New_York')).toISOString()).toBe(
      '2026-11-02T05:00:00.000Z',
    );
    expect(new Date(startOfLocalDay(2026, 3, 1, 'UTC')).toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });
});
