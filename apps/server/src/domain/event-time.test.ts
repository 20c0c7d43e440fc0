import { describe, expect, it } from 'vitest';
import { eventTime, EVENT_TIME_SKEW_MS, parseOccurredAt } from './event-time.js';

const NOW = Date.parse('2026-11-22T10:00:00Z');
const WINDOW = 15 * 60_000;

describe('event times (D15)', () => {
  it('reads RFC 3339 UTC times, with or without a fraction of a second', () => {
    expect(parseOccurredAt('2026-11-22T10:00:00Z')).toBe(NOW);
    expect(parseOccurredAt('2026-11-22T10:00:00.250Z')).toBe(NOW + 250);
    expect(parseOccurredAt('2026-11-22T10:00:00.250123Z')).toBe(NOW + 250);
  });

  it.each([
    ['2026-11-22T10:00:00'],
    ['2026-11-22T10:00:00+01:00'],
    ['2026-02-30T10:00:00Z'],
    [''],
    [NOW],
    [null],
  ])('refuses %j', (value) =>
    expect(() => parseOccurredAt(value)).toThrow(/^occurredAt must be a UTC time, e.g./),
  );

  it('judges at the event time within its bounds, at now without one', () => {
    expect(eventTime(undefined, NOW, WINDOW)).toBe(NOW);
    expect(eventTime(NOW - 60_000, NOW, WINDOW)).toBe(NOW - 60_000);
    expect(eventTime(NOW - WINDOW, NOW, WINDOW)).toBe(NOW - WINDOW);
    expect(eventTime(NOW + EVENT_TIME_SKEW_MS, NOW, WINDOW)).toBe(NOW);
    expect(() => eventTime(NOW + EVENT_TIME_SKEW_MS + 1, NOW, WINDOW)).toThrow('5 seconds in the future');
    expect(() => eventTime(NOW - WINDOW - 1, NOW, WINDOW)).toThrow('more than 15 minutes old');
    expect(() => eventTime(NOW - 90_001, NOW, 90_000)).toThrow('more than 90 seconds old');
  });
});
