import { describe, expect, it } from 'vitest';
import { isTimeZone, localDate, startOfNextLocalDay } from './time-zones.js';

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
