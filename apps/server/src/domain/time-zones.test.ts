import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  instantOfLocalTime,
  isTimeZone,
  localDate,
  localPeriod,
  startOfLocalDay,
  startOfNextLocalDay,
} from './time-zones.js';

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
    // Santiago skips midnight on 6 September 2026: 23:59:59 at -04:00 is followed by 01:00 at
    // -03:00, and that instant begins the day.
    ['America/Santiago', '2026-09-06T03:30:00Z', '2026-09-06T04:00:00.000Z'],
    ['America/Havana', '2026-03-08T04:30:00Z', '2026-03-08T05:00:00.000Z'],
    // Havana goes back from 01:00 to 00:00 on 1 November 2026: the day began at the first midnight
    // and the second one does not begin another.
    ['America/Havana', '2026-11-01T03:30:00Z', '2026-11-01T04:00:00.000Z'],
    ['America/Havana', '2026-11-01T05:30:00Z', '2026-11-02T05:00:00.000Z'],
    // Apia skipped 30 December 2011 entirely.
    ['Pacific/Apia', '2011-12-29T12:00:00Z', '2011-12-30T10:00:00.000Z'],
  ])('in %s, the day after %s starts at %s', (zone, instant, expected) => {
    expect(new Date(startOfNextLocalDay(Date.parse(instant), zone)).toISOString()).toBe(expected);
  });

  // Zones whose clocks change at or across midnight (skipping it or repeating it), with instants
  // of the days around their changes, plus zones with ordinary or half-hour changes.
  const HOUR = 3_600_000;
  const changes: Array<[string, string[]]> = [
    ['America/Santiago', ['2026-04-05T03:00:00Z', '2026-09-06T04:00:00Z']],
    ['America/Havana', ['2026-03-08T05:00:00Z', '2026-11-01T05:00:00Z']],
    ['Atlantic/Azores', ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z']],
    ['America/Asuncion', ['2023-10-01T04:00:00Z', '2024-03-24T03:00:00Z']],
    ['Africa/Cairo', ['2026-04-23T22:00:00Z', '2026-10-29T21:00:00Z']],
    ['Asia/Beirut', ['2026-03-28T22:00:00Z', '2026-10-24T21:00:00Z']],
    ['America/Scoresbysund', ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z']],
    ['Australia/Lord_Howe', ['2026-04-04T15:00:00Z', '2026-10-03T15:30:00Z']],
    ['America/New_York', ['2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z']],
    ['Pacific/Apia', ['2011-12-30T10:00:00Z']],
  ];
  const zoneAndInstant = fc.oneof(
    fc
      .constantFrom(
        ...changes.flatMap(([zone, instants]) => instants.map((instant) => [zone, instant] as const)),
      )
      .chain(([zone, instant]) =>
        fc.tuple(
          fc.constant(zone),
          fc.integer({ min: -30 * HOUR, max: 30 * HOUR }).map((d) => Date.parse(instant) + d),
        ),
      ),
    fc.tuple(
      fc.constantFrom(...changes.map(([zone]) => zone)),
      fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2037-12-31T00:00:00Z') }),
    ),
  );

  it('always finds a later instant that begins a later local day, with nothing of it before', () => {
    fc.assert(
      fc.property(zoneAndInstant, ([zone, instant]) => {
        const next = startOfNextLocalDay(instant, zone);
        expect(next).toBeGreaterThan(instant);
        expect(localDate(next, zone) > localDate(instant, zone)).toBe(true);
        // Every instant up to it still belongs to the day of `instant`.
        expect(localDate(next - 1, zone)).toBe(localDate(instant, zone));
      }),
      { numRuns: 1000 },
    );
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

describe('instantOfLocalTime', () => {
  it('reads a wall-clock time in its zone, on both sides of a daylight-saving change', () => {
    expect(new Date(instantOfLocalTime('2026-12-01T09:00', 'Europe/Paris')!).toISOString()).toBe(
      '2026-12-01T08:00:00.000Z',
    );
    expect(new Date(instantOfLocalTime('2026-07-01T09:00', 'Europe/Paris')!).toISOString()).toBe(
      '2026-07-01T07:00:00.000Z',
    );
    expect(new Date(instantOfLocalTime('2026-03-08T12:30', 'America/New_York')!).toISOString()).toBe(
      '2026-03-08T16:30:00.000Z',
    );
    expect(instantOfLocalTime('2026-12-01 09:00', 'UTC')).toBeUndefined();
  });
});
