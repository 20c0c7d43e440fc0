import { describe, expect, it } from 'vitest';
import { FORECAST_WINDOW_MS, forecastBudget, forecastJson, forecastText } from './budget-forecast.js';
import { micros, MAX_MICROS } from './money.js';

const HOUR = 3_600_000;
const now = Date.parse('2026-06-01T12:00:00Z');
const endOfDay = Date.parse('2026-06-02T00:00:00Z');

describe('when a budget runs out at the current pace (D18)', () => {
  const forecast = (budget: number, spent: number, recent: number, periodEnd: number | null = endOfDay) =>
    forecastBudget({ budget: micros(budget), spent: micros(spent), recent: micros(recent), now, periodEnd });

  it('goes on at the last hour’s spend: 10.00 left at 2.50 an hour runs out in 4 hours', () => {
    expect(FORECAST_WINDOW_MS).toBe(HOUR);
    expect(forecast(50_000_000, 40_000_000, 2_500_000)).toEqual({ state: 'runs_out', at: now + 4 * HOUR });
    // Rounded up to the millisecond: 1 micro left at 3 micros an hour is spent after 1,200,000 ms.
    expect(forecast(10, 9, 3)).toEqual({ state: 'runs_out', at: now + HOUR / 3 });
    expect(forecast(10, 9, 7)).toEqual({ state: 'runs_out', at: now + Math.ceil(HOUR / 7) });
  });

  it('gives the money guide’s example: 8.00 of a daily 10.00 left at 1.50 an hour runs out at 17:20', () => {
    expect(forecast(10_000_000, 2_000_000, 1_500_000)).toEqual({
      state: 'runs_out',
      at: Date.parse('2026-06-01T17:20:00Z'),
    });
    expect(forecast(10_000_000, 2_000_000, 500_000)).toEqual({ state: 'lasts' });
  });

  it('says when it lasts its period at this pace, and when it has no pace to tell from', () => {
    // 12 hours left of the day, 13 hours of spend left: not at the current pace.
    expect(forecast(50_000_000, 24_000_000, 2_000_000)).toEqual({ state: 'lasts' });
    // Exactly at the period's end is not within it.
    expect(forecast(50_000_000, 26_000_000, 2_000_000)).toEqual({ state: 'lasts' });
    expect(forecast(50_000_000, 26_000_001, 2_000_000)).toMatchObject({ state: 'runs_out' });
    // Spent before but not in the last hour: no pace, it lasts.
    expect(forecast(50_000_000, 1_000_000, 0)).toEqual({ state: 'lasts' });
    // Nothing spent yet: nothing to say.
    expect(forecast(50_000_000, 0, 0)).toBeNull();
    // Nothing left.
    expect(forecast(50_000_000, 50_000_000, 1)).toEqual({ state: 'spent' });
  });

  it('has no end for a budget without a period, and never leaves integers for the largest amounts', () => {
    expect(forecast(MAX_MICROS, 1, 1, null)).toEqual({ state: 'lasts' });
    expect(forecast(MAX_MICROS, 1, MAX_MICROS - 1, null)).toEqual({ state: 'runs_out', at: now + HOUR });
    expect(forecast(100, 50, 50, null)).toEqual({ state: 'runs_out', at: now + HOUR });
  });

  it('reads in words and in JSON', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    expect(forecastText({ state: 'runs_out', at: now }, at)).toBe('2026-06-01T12:00:00.000Z');
    expect(forecastText({ state: 'lasts' }, at)).toBe('not at the current pace');
    expect(forecastText({ state: 'spent' }, at)).toBe('spent');
    expect(forecastText(null, at)).toBe('');
    expect(forecastJson({ state: 'runs_out', at: now })).toEqual({
      state: 'runs_out',
      at: '2026-06-01T12:00:00.000Z',
    });
    expect(forecastJson({ state: 'lasts' })).toEqual({ state: 'lasts' });
    expect(forecastJson(null)).toBeNull();
  });
});
