import { describe, expect, it } from 'vitest';
import { NO_CAPS } from './campaigns.js';
import {
  FLAT_TRAFFIC,
  MAX_WEIGHT_FACTOR,
  PACING_STEP_MS,
  canPaceEvenly,
  paceOf,
  planOf,
  plannedBy,
} from './pacing.js';

const HOUR = 3_600_000;
const day = Date.parse('2026-06-01T00:00:00Z');

describe('pacing plans and paces (D16)', () => {
  it('plans a flat day evenly: half the cap by noon, all of it at the end', () => {
    const plan = planOf(1000, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    expect(plannedBy(plan, day)).toBe(0);
    expect(plannedBy(plan, day + 12 * HOUR)).toBeCloseTo(500, 6);
    expect(plannedBy(plan, day + 12 * HOUR + 7.5 * 60_000)).toBeCloseTo(500 + 1000 / 192, 6);
    expect(plannedBy(plan, day + 24 * HOUR)).toBe(1000);
  });

  it('follows the traffic by local hour in the campaign’s time zone', () => {
    const evenings = FLAT_TRAFFIC.map((_, hour) => (hour === 20 ? 1000 : 0));
    // 20:00 in Paris (summer) is 18:00 UTC: almost nothing is planned before it, all of it after.
    const plan = planOf(1000, day - 2 * HOUR, day + 22 * HOUR, evenings, 'Europe/Paris');
    expect(plannedBy(plan, day + 18 * HOUR)).toBeLessThan(1);
    expect(plannedBy(plan, day + 19 * HOUR)).toBeGreaterThan(999);
  });

  it('holds a campaign at or past where its plan will be after the next step, boosts one behind', () => {
    const plan = planOf(2400, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    const noon = day + 12 * HOUR;
    const next = plannedBy(plan, noon + PACING_STEP_MS);
    expect(paceOf([{ plan, delivered: Math.ceil(next) }], noon)).toEqual({ held: true, weightFactor: 1 });
    // 1,300 still needed: 13 tickets.
    expect(paceOf([{ plan, delivered: 1100 }], noon)).toEqual({ held: false, weightFactor: 13 });
    expect(paceOf([{ plan, delivered: 1199 }], noon)).toEqual({ held: false, weightFactor: 13 });
    const huge = planOf(1e9, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    expect(paceOf([{ plan: huge, delivered: 0 }], noon).weightFactor).toBe(MAX_WEIGHT_FACTOR);
    // Any cap ahead holds the campaign, whatever the others.
    expect(
      paceOf(
        [
          { plan, delivered: 0 },
          { plan, delivered: 2000 },
        ],
        noon,
      ).held,
    ).toBe(true);
    expect(paceOf([], noon)).toEqual({ held: false, weightFactor: 1 });
  });

  it('spreads only what has a period: a daily cap, or a total cap with an end', () => {
    expect(canPaceEvenly({ ...NO_CAPS, clicksDaily: 5 }, null)).toBe(true);
    expect(canPaceEvenly({ ...NO_CAPS, impressionsTotal: 5 }, null)).toBe(false);
    expect(canPaceEvenly({ ...NO_CAPS, impressionsTotal: 5 }, day)).toBe(true);
    expect(canPaceEvenly(NO_CAPS, day)).toBe(false);
  });
});
