import { expect, it } from 'vitest';
import { checkMonth, monthOf, monthPeriod, monthsBetween, nextMonth } from './statement-months.js';

it('reads a month and refuses anything else', () => {
  expect(checkMonth(' 2026-03 ')).toBe('2026-03');
  for (const bad of ['2026-3', '2026-13', '2026-00', '26-03', 202603, undefined])
    expect(() => checkMonth(bad)).toThrow(/month, YYYY-MM/);
});

it('gives a month its instants in the billing time zone, December into January', () => {
  expect(monthPeriod('2026-12', 'UTC')).toEqual({
    start: Date.UTC(2026, 11, 1),
    end: Date.UTC(2027, 0, 1),
  });
  // Paris is UTC+1 in winter: its March starts at 23:00 UTC on the last day of February and ends
  // at 22:00 UTC (summer time from 29 March).
  expect(monthPeriod('2026-03', 'Europe/Paris')).toEqual({
    start: Date.UTC(2026, 1, 28, 23),
    end: Date.UTC(2026, 2, 31, 22),
  });
  expect(monthOf(Date.UTC(2026, 1, 28, 23, 30), 'Europe/Paris')).toBe('2026-03');
  expect(monthOf(Date.UTC(2026, 1, 28, 23, 30), 'UTC')).toBe('2026-02');
});

it('counts months across a year', () => {
  expect(nextMonth('2026-12')).toBe('2027-01');
  expect(monthsBetween('2026-11', '2027-02')).toEqual(['2026-11', '2026-12', '2027-01', '2027-02']);
  expect(monthsBetween('2026-11', '2026-10')).toEqual([]);
});
