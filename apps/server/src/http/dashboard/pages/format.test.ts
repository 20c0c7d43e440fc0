import { describe, expect, it } from 'vitest';
import { flight, when, whenIn, whenToTheSecond } from './format.js';

describe('dates as the dashboard shows them', () => {
  it('reads a flight on its own wall clock, across a change of the clocks', () => {
    // Paris is UTC+2 until 2026-10-25 (summer time) and UTC+1 after it.
    const start = Date.parse('2026-10-01T06:00:00Z');
    const end = Date.parse('2026-10-31T22:00:00Z');
    expect(flight(start, end, 'Europe/Paris')).toBe(
      '2026-10-01 08:00 Europe/Paris to 2026-10-31 23:00 Europe/Paris',
    );
    expect(flight(start, null, 'Europe/Paris')).toBe('from 2026-10-01 08:00 Europe/Paris');
    expect(flight(null, end, 'Europe/Paris')).toBe('until 2026-10-31 23:00 Europe/Paris');
    expect(flight(null, null)).toBe('always');
  });

  it('shows UTC to the minute, a dash for never, and a zone on the other side of the date line', () => {
    expect(when(Date.parse('2026-03-08T09:59:59Z'))).toBe('2026-03-08 09:59 UTC');
    expect(when(null)).toBe('—');
    expect(whenToTheSecond(Date.parse('2026-03-08T09:59:59.900Z'))).toBe('2026-03-08 09:59:59 UTC');
    expect(whenToTheSecond(null)).toBe('—');
    expect(whenIn(Date.parse('2026-03-08T11:30:00Z'), 'Pacific/Auckland')).toBe(
      '2026-03-09 00:30 Pacific/Auckland',
    );
  });
});
