import { describe, expect, it } from 'vitest';
import { DomainError } from './errors.js';
import { datesOf, planDates, planWindow, previousPeriod } from './report-windows.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `count` instants, one a day from `date` at `time` UTC: a zone's local midnights on days over which
 * its offset holds.
 */
const dailyAt = (date: string, time: string, count: number) =>
  Array.from({ length: count }, (_, i) => iso(Date.parse(`${date}T${time}Z`) + i * 24 * 3_600_000));

describe('report windows', () => {
  const now = Date.parse('2026-03-29T10:17:42Z');

  it('covers the last 60 minutes, this one included', () => {
    const plan = planWindow('hour', now, 'UTC');
    expect(plan.granularity).toBe('minute');
    expect(plan.starts).toHaveLength(60);
    expect(iso(plan.from)).toBe('2026-03-29T09:18:00.000Z');
    expect(iso(plan.to)).toBe('2026-03-29T10:18:00.000Z');
  });

  it('covers 24 local hours, aligned on the hours of a zone half an hour off UTC', () => {
    const plan = planWindow('day', now, 'Asia/Kolkata'); // +05:30: 15:47 local
    expect(plan.granularity).toBe('hour');
    expect(plan.starts).toHaveLength(24);
    expect(iso(plan.to)).toBe('2026-03-29T10:30:00.000Z'); // 16:00 local
    expect(iso(plan.from)).toBe('2026-03-28T10:30:00.000Z');
  });

  it('counts local days, a day that daylight saving shortens included', () => {
    // Europe/Paris moved to summer time on 2026-03-29: that day has 23 hours.
    const plan = planWindow('week', now, 'Europe/Paris');
    expect(plan.granularity).toBe('day');
    expect(plan.starts.map(iso)).toEqual(dailyAt('2026-03-22', '23:00:00.000', 7)); // 2026-03-23 to 29, local
    expect(iso(plan.to)).toBe('2026-03-29T22:00:00.000Z');
  });

  it('reaches 90 days back', () => {
    const plan = planWindow('quarter', now, 'UTC');
    expect(plan.starts).toHaveLength(90);
    expect(iso(plan.from)).toBe('2025-12-30T00:00:00.000Z');
  });

  it('compares a window with the same span of time before it', () => {
    const plan = planWindow('day', now, 'UTC');
    const before = previousPeriod(plan, 'UTC');
    expect([iso(before.from), iso(before.to)]).toEqual(['2026-03-27T11:00:00.000Z', iso(plan.from)]);
  });

  it('compares a week with the seven local days before it, whatever their hours', () => {
    // The week ending 2026-03-29 has a 23-hour day in Paris; the week before has none.
    const before = previousPeriod(planWindow('week', now, 'Europe/Paris'), 'Europe/Paris');
    expect([iso(before.from), iso(before.to)]).toEqual([
      '2026-03-15T23:00:00.000Z',
      '2026-03-22T23:00:00.000Z',
    ]);
  });
});

describe('reports by dates', () => {
  it('covers one local day by hour, a daylight-saving day with its 23 hours', () => {
    const plan = planDates('2026-03-29', '2026-03-29', 'Europe/Paris');
    expect(plan.granularity).toBe('hour');
    expect(plan.starts).toHaveLength(23);
    expect([iso(plan.from), iso(plan.to)]).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(datesOf(plan, 'Europe/Paris')).toEqual({ from: '2026-03-29', to: '2026-03-29' });
    const before = previousPeriod(plan, 'Europe/Paris');
    expect([iso(before.from), iso(before.to)]).toEqual(['2026-03-27T23:00:00.000Z', iso(plan.from)]);
  });

  it('covers longer spans by local day, both dates included', () => {
    const plan = planDates('2026-02-27', '2026-03-02', 'America/New_York');
    expect(plan.granularity).toBe('day');
    expect(plan.starts.map(iso)).toEqual(dailyAt('2026-02-27', '05:00:00.000', 4)); // through a 28-day February
    expect(iso(plan.to)).toBe('2026-03-03T05:00:00.000Z');
    const before = previousPeriod(plan, 'America/New_York');
    expect(iso(before.from)).toBe('2026-02-23T05:00:00.000Z');
  });

  it('refuses what is not a span of dates, naming the field', () => {
    const refusal = (from: string, to: string) => {
      try {
        planDates(from, to, 'UTC');
      } catch (error) {
        return error instanceof DomainError ? error.message : String(error);
      }
      return 'accepted';
    };
    expect(refusal('2026-02-30', '2026-03-01')).toBe('from must be a date (YYYY-MM-DD)');
    expect(refusal('2026-03-01', 'tomorrow')).toBe('to must be a date (YYYY-MM-DD)');
    expect(refusal('2026-03-02', '2026-03-01')).toBe('to must be the same day as from or later');
    expect(refusal('2025-01-01', '2026-01-02')).toBe('to must be at most 366 days after from, counting both');
    expect(refusal('2024-01-01', '2024-12-31')).toBe('accepted'); // 366 days, a leap year
  });
});
