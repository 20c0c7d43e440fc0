import { describe, expect, it } from 'vitest';
import { planWindow } from './report-windows.js';

const iso = (ms: number) => new Date(ms).toISOString();

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
    expect(plan.starts.map(iso)).toEqual([
      '2026-03-22T23:00:00.000Z',
      '2026-03-23T23:00:00.000Z',
      '2026-03-24T23:00:00.000Z',
      '2026-03-25T23:00:00.000Z',
      '2026-03-26T23:00:00.000Z',
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T23:00:00.000Z',
    ]);
    expect(iso(plan.to)).toBe('2026-03-29T22:00:00.000Z');
  });

  it('reaches 90 days back', () => {
    const plan = planWindow('quarter', now, 'UTC');
    expect(plan.starts).toHaveLength(90);
    expect(iso(plan.from)).toBe('2025-12-30T00:00:00.000Z');
  });
});
