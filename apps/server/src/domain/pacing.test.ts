import { describe, expect, it } from 'vitest';
import { NO_BUDGET, NO_CAPS } from './campaigns.js';
import { micros } from './money.js';
import {
  FLAT_TRAFFIC,
  MAX_WEIGHT_FACTOR,
  NO_DRAWS,
  PACING_STEP_MS,
  START_CHANCE,
  budgetCap,
  canPaceEvenly,
  chanceOf,
  recordDraws,
  learnTraffic,
  paceOf,
  planOf,
  plannedBy,
  recentFetches,
  recentWindow,
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

  it('spreads a daily cap over the hours its schedule runs, not the whole day (dayparting)', () => {
    // 2026-06-01 is a Monday; 9:00 to 17:00 in Berlin (UTC+2) is 07:00 to 15:00 UTC: 8 hours.
    const plan = planOf(800, day - 2 * HOUR, day + 22 * HOUR, FLAT_TRAFFIC, 'Europe/Berlin', {
      mon: [[9, 17]],
    });
    expect(plannedBy(plan, day + 7 * HOUR)).toBe(0);
    expect(plannedBy(plan, day + 8 * HOUR)).toBeCloseTo(100, 6);
    expect(plannedBy(plan, day + 11 * HOUR)).toBeCloseTo(400, 6);
    expect(plannedBy(plan, day + 15 * HOUR)).toBeCloseTo(800, 6);
    expect(plannedBy(plan, day + 20 * HOUR)).toBeCloseTo(800, 6);
    // A day it does not run is planned as if it ran every hour: it is not served then anyway.
    const sunday = planOf(800, day - 2 * HOUR, day + 22 * HOUR, FLAT_TRAFFIC, 'Europe/Berlin', {
      sat: [[9, 17]],
    });
    expect(plannedBy(sunday, day + 10 * HOUR)).toBeCloseTo(400, 6);
  });

  it('spreads a daily cap over its scheduled hours on a day daylight saving shortens', () => {
    // Sunday 2026-03-29 in Berlin: 01:00 to 04:00 has two hours (02:00 does not exist), so each
    // gets half the cap: 01:00 CET is 00:00 UTC, 03:00 CEST is 01:00 UTC.
    const from = Date.parse('2026-03-28T23:00:00Z');
    const plan = planOf(100, from, from + 23 * HOUR, FLAT_TRAFFIC, 'Europe/Berlin', { sun: [[1, 4]] });
    expect(plannedBy(plan, Date.parse('2026-03-29T00:00:00Z'))).toBe(0);
    expect(plannedBy(plan, Date.parse('2026-03-29T01:00:00Z'))).toBeCloseTo(50, 6);
    expect(plannedBy(plan, Date.parse('2026-03-29T02:00:00Z'))).toBeCloseTo(100, 6);
  });

  it('holds a campaign at or past where its plan will be after the next step, boosts one behind', () => {
    const plan = planOf(2400, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    const noon = day + 12 * HOUR;
    const next = plannedBy(plan, noon + PACING_STEP_MS);
    // Held with its figures: 1,201 of the 1,200 planned by noon, served again one step before the
    // plan reaches 1,201 (2,400 a day is one every 36 seconds).
    expect(paceOf([{ plan, delivered: Math.ceil(next) }], noon)).toEqual({
      held: true,
      weightFactor: 1,
      chance: 0,
      hold: {
        delivered: 1201,
        planned: 1200,
        cap: 2400,
        unit: 'impressions',
        releasedAt: noon + 36_000 - PACING_STEP_MS,
      },
    });
    // 1,300 still needed: 13 tickets.
    expect(paceOf([{ plan, delivered: 1100 }], noon)).toEqual({ held: false, weightFactor: 13, chance: 1 });
    expect(paceOf([{ plan, delivered: 1199 }], noon)).toEqual({ held: false, weightFactor: 13, chance: 1 });
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
    expect(paceOf([], noon)).toEqual({ held: false, weightFactor: 1, chance: 1 });
  });

  it('releases a campaign gradually: the chance of a fetch is what its plan allows in the next step over the fetches expected', () => {
    const plan = planOf(2400, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    const noon = day + 12 * HOUR;
    // 1,200 planned by noon, 1,200.28 ten seconds later: 1,200 delivered may have 0.28 more.
    const pace = paceOf([{ plan, delivered: 1200 }], noon, PACING_STEP_MS, 100);
    expect(pace.held).toBe(false);
    expect(pace.chance).toBeCloseTo(2400 / 8640 / 100, 9);
    // Far behind, or with no traffic known, every fetch may return it.
    expect(paceOf([{ plan, delivered: 1000 }], noon, PACING_STEP_MS, 100).chance).toBe(1);
    expect(paceOf([{ plan, delivered: 1200 }], noon).chance).toBe(1);
  });

  it('serves a campaign exactly on its plan now: it is held only once at where the plan will be after the step', () => {
    const plan = planOf(2400, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    const noon = day + 12 * HOUR;
    // At noon the plan is at 1,200; after an hour-long step it will be at 1,300.
    expect(plannedBy(plan, noon)).toBe(1200);
    for (const delivered of [1200, 1250, 1299]) {
      expect(paceOf([{ plan, delivered }], noon, HOUR), `${delivered} delivered`).toMatchObject({
        held: false,
        weightFactor: 12,
        chance: 1,
      });
    }
    expect(paceOf([{ plan, delivered: 1300 }], noon, HOUR).held).toBe(true);
    // The same with the real step: on the plan now is still behind where it will be.
    expect(paceOf([{ plan, delivered: 1200 }], noon).held).toBe(false);
  });

  it('spreads only what has a period: a daily cap, or a total cap with an end', () => {
    expect(canPaceEvenly({ ...NO_CAPS, clicksDaily: 5 }, null)).toBe(true);
    expect(canPaceEvenly({ ...NO_CAPS, impressionsTotal: 5 }, null)).toBe(false);
    expect(canPaceEvenly({ ...NO_CAPS, impressionsTotal: 5 }, day)).toBe(true);
    expect(canPaceEvenly(NO_CAPS, day)).toBe(false);
    // A spend budget (D18) has the same periods.
    expect(canPaceEvenly(NO_CAPS, null, { ...NO_BUDGET, dailyMicros: micros(5_000_000) })).toBe(true);
    expect(canPaceEvenly(NO_CAPS, null, { ...NO_BUDGET, totalMicros: micros(5_000_000) })).toBe(false);
    expect(canPaceEvenly(NO_CAPS, day, { ...NO_BUDGET, totalMicros: micros(5_000_000) })).toBe(true);
    expect(canPaceEvenly(NO_CAPS, day, NO_BUDGET)).toBe(false);
  });
});

describe('pacing a spend budget (D16, D18)', () => {
  const noon = day + 12 * HOUR;
  const flatDay = (cap: number) => planOf(cap, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
  const cpm = { model: 'cpm' as const, amountMicros: micros(2_500_000) };
  const cpc = { model: 'cpc' as const, amountMicros: micros(400_000) };
  /** A daily budget of 24.00 at a CPM of 2.50, `spent` micros spent today. */
  const daily = (spent: number, price: typeof cpm | typeof cpc = cpm) =>
    budgetCap(micros(24_000_000), micros(spent), price, flatDay)!;

  it('plans a budget in whole micros, spread like a cap: half by noon', () => {
    // 24,000,000 micros over a flat day: 12,000,000 by noon, 2,777.7… more each ten seconds, floored.
    const next = Math.floor(12_000_000 + 24_000_000 / 8640);
    expect(next).toBe(12_002_777);
    // Spent exactly what the plan will be at after the step: held, with the spend and plan in micros.
    const held = paceOf([daily(next)], noon);
    expect(held.held).toBe(true);
    expect(held.hold).toMatchObject({
      delivered: next,
      planned: 12_000_000,
      cap: 24_000_000,
      unit: 'micros',
    });
    // A micro less is behind: served. Spend is compared with the plan as whole micros.
    expect(paceOf([daily(next - 1)], noon).held).toBe(false);
    // Exactly on the plan now: still behind where it will be after the step.
    expect(paceOf([daily(12_000_000)], noon).held).toBe(false);
    expect(paceOf([daily(20_000_000)], noon).hold?.releasedAt).toBe(day + 20 * HOUR - PACING_STEP_MS);
  });

  it('tells what a budget still needs in units of delivery: its tickets and chance follow its price', () => {
    // 12,000,000 micros still needed at a CPM of 2.50 are 4,800 impressions: 48 tickets.
    expect(paceOf([daily(12_000_000)], noon)).toMatchObject({ held: false, weightFactor: 48 });
    // At a CPC of 0.40 the same are 30 clicks: 1 ticket.
    expect(paceOf([daily(12_000_000, cpc)], noon).weightFactor).toBe(1);
    // The next step allows 2,777 micros more: 1.11 impressions, over 100 fetches expected.
    expect(paceOf([daily(12_000_000)], noon, PACING_STEP_MS, 100).chance).toBeCloseTo(2777 / 2500 / 100, 9);
  });

  it('has nothing to spread at a price that spends nothing per event', () => {
    expect(budgetCap(micros(1_000_000), micros(0), null, flatDay)).toBeNull();
    const flat = { model: 'flat' as const, amountMicros: micros(1_000_000) };
    expect(budgetCap(micros(1_000_000), micros(0), flat, flatDay)).toBeNull();
  });

  it('is held by whichever of a cap and a budget is furthest ahead of its plan', () => {
    const cap = { plan: flatDay(2400), delivered: 1300 };
    // The cap is 100 impressions ahead (released at 13:00), the budget 2.00 (at 14:00): the budget governs.
    const both = paceOf([cap, daily(14_000_000)], noon);
    expect(both.hold).toMatchObject({ unit: 'micros', releasedAt: day + 14 * HOUR - PACING_STEP_MS });
    expect(paceOf([daily(14_000_000), cap], noon).hold).toEqual(both.hold);
    // The budget behind and the cap ahead: the cap holds it.
    expect(paceOf([cap, daily(1_000_000)], noon).hold).toMatchObject({
      unit: 'impressions',
      delivered: 1300,
    });
    // Both behind: served, with tickets for the one that needs the most (the budget's 9,200 impressions).
    expect(paceOf([{ ...cap, delivered: 0 }, daily(1_000_000)], noon).weightFactor).toBe(92);
  });
});

describe('learning the traffic of a placement (D16)', () => {
  const QUARTER = 15 * 60_000;
  /** Quarter hours from `from` to `to` with `perHour(hour)` impressions an hour (UTC hours). */
  const history = (from: number, to: number, perHour: (hour: number) => number) => {
    const slots = [];
    for (let slot = from; slot < to; slot += QUARTER)
      slots.push({ slot, impressions: perHour(new Date(slot).getUTCHours()) / 4 });
    return slots;
  };
  const shares = (traffic: readonly number[]) => {
    const sum = traffic.reduce((a, b) => a + b, 0);
    return traffic.map((value) => value / sum);
  };

  it('plans flat with no history', () => {
    expect(learnTraffic([], day - 7 * 24 * HOUR, day + HOUR, 'UTC')).toEqual(FLAT_TRAFFIC);
  });

  it('plans minutes after a placement is first seen as flat, not with the whole cap in them', () => {
    // Seen from midnight; 18 minutes later a cap of 86,400 a day expects 18 minutes' share.
    const now = day + 18 * 60_000;
    const traffic = learnTraffic(
      history(day, day + 15 * 60_000, () => 40_000),
      now - 7 * 24 * HOUR,
      now,
      'UTC',
    );
    const plan = planOf(86_400, day, day + 24 * HOUR, traffic, 'UTC');
    expect(plannedBy(plan, now + PACING_STEP_MS) / 86_400).toBeCloseTo((18 * 60 + 10) / 86_400, 4);
  });

  it('weighs each hour by how often it was seen: a day and a half of even traffic learns flat', () => {
    const now = day + 12 * HOUR;
    const traffic = learnTraffic(
      history(day - 24 * HOUR, now, () => 1000),
      now - 7 * 24 * HOUR,
      now,
      'UTC',
    );
    for (const share of shares(traffic)) expect(share).toBeCloseTo(1 / 24, 9);
  });

  it('learns the shape of a full day, and of hours not yet seen from the prior', () => {
    const evening = (hour: number) => (hour >= 18 ? 3000 : 1000);
    const week = learnTraffic(history(day - 7 * 24 * HOUR, day, evening), day - 7 * 24 * HOUR, day, 'UTC');
    expect(shares(week)[20] / shares(week)[8]).toBeCloseTo(3, 9);
    // Six hours seen: those are as seen, the other 18 at the level the prior's shape gives them.
    const now = day + 6 * HOUR;
    const prior = FLAT_TRAFFIC.map((_, hour) => (hour >= 18 ? 2 : 1));
    const early = learnTraffic(
      history(day, now, () => 500),
      now - 7 * 24 * HOUR,
      now,
      'UTC',
      prior,
    );
    expect(early[3]).toBeCloseTo(500, 9);
    expect(early[12]).toBeCloseTo(500, 9);
    expect(early[20]).toBeCloseTo(1000, 9);
  });

  it('starts a campaign whose fetches are unknown at a small chance and doubles it while its draws show none', () => {
    let draws = NO_DRAWS;
    const chances: number[] = [];
    for (let step = 0; step < 12; step++) {
      const chance = chanceOf(0.1, 0, draws);
      chances.push(chance);
      draws = recordDraws(draws, chance, 0);
    }
    expect(chances.slice(0, 4)).toEqual([START_CHANCE, 2 * START_CHANCE, 4 * START_CHANCE, 8 * START_CHANCE]);
    expect(chances[11]).toBe(1);
    // Fetches known from a full day of history: what the plan allows over them, at once.
    expect(chanceOf(0.1, 100, NO_DRAWS)).toBeCloseTo(0.001, 12);
  });

  it('estimates the fetches from its own draws: impressions over the chances summed', () => {
    // Drawn at 0.01 for 100 steps, 50 impressions: about 50 fetches a step.
    let draws = recordDraws(NO_DRAWS, 0, 0);
    for (let step = 1; step <= 100; step++) draws = recordDraws(draws, 0.01, step / 2);
    expect(chanceOf(0.5, 0, draws)).toBeCloseTo(0.01, 9);
    // Never more than double the last chance, however few fetches its draws suggest.
    expect(chanceOf(50, 0, draws)).toBeCloseTo(0.02, 12);
  });

  it('keeps a cap of 1,000 a day on a million fetches a day, from no history, within 3% of its plan at every step', () => {
    // A placement's traffic at 35 fetches a step (its night hours), never told to the pace.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const plan = planOf(1000, day, day + 24 * HOUR, FLAT_TRAFFIC, 'UTC');
    let draws = NO_DRAWS;
    let delivered = 0;
    let mostAhead = 0;
    let furthest = 0;
    for (let now = day; now < day + 3 * HOUR; now += PACING_STEP_MS) {
      mostAhead = Math.max(mostAhead, (delivered - plannedBy(plan, now)) / 1000);
      if ((now - day) % HOUR === 0)
        furthest = Math.max(furthest, Math.abs(delivered - plannedBy(plan, now)) / 1000);
      const pace = paceOf([{ plan, delivered }], now, PACING_STEP_MS, 0, draws);
      for (let fetch = 0; fetch < 35; fetch++) if (random() < pace.chance) delivered++;
      draws = recordDraws(draws, pace.chance, delivered);
    }
    expect(mostAhead).toBeLessThanOrEqual(0.03);
    expect(furthest).toBeLessThanOrEqual(0.03);
    expect(delivered / plannedBy(plan, day + 3 * HOUR)).toBeGreaterThan(0.9);
  });

  it('reads the fetches placements have now from the whole minutes before this one, since they were first seen', () => {
    const now = day + 10 * 60_000 + 30_000;
    expect(recentWindow(now)).toEqual({ since: day + 5 * 60_000, until: day + 10 * 60_000 });
    const minutes = (from: number, to: number, perMinute: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        slot: day + (from + i) * 60_000,
        impressions: perMinute,
      }));
    // 600 impressions a minute: 100 a step. Minutes before the window and the current one are left out.
    const steady = [...minutes(0, 5, 6000), ...minutes(5, 10, 600), ...minutes(10, 11, 6000)];
    expect(recentFetches(steady, now)).toBeCloseTo(100, 9);
    // First seen two minutes ago: as busy as those two minutes, not two fifths of it.
    expect(recentFetches(minutes(8, 10, 600), now)).toBeCloseTo(100, 9);
    expect(recentFetches([], now)).toBe(0);
    expect(recentFetches(minutes(10, 11, 600), now)).toBe(0);
  });

  it('takes the fetches a step as the more of what its draws showed and what its placements had now', () => {
    // Drawn at 0.01 for 100 steps, 50 impressions: its draws show about 50 fetches a step.
    let draws = recordDraws(NO_DRAWS, 0, 0);
    for (let step = 1; step <= 100; step++) draws = recordDraws(draws, 0.01, step / 2);
    // Its placements had 500 impressions a step: a tenth of the chance its draws alone would give.
    expect(chanceOf(0.5, 0, draws, 500)).toBeCloseTo(0.001, 12);
    // Fewer than its draws showed (impressions are fetches at the least): the draws decide.
    expect(chanceOf(0.5, 0, draws, 5)).toBeCloseTo(0.01, 9);
    // Before any draw, still the cautious start, then at most what the plan allows over them.
    expect(chanceOf(0.5, 0, NO_DRAWS, 500)).toBe(START_CHANCE);
    expect(chanceOf(0.1, 0, { ...NO_DRAWS, chance: 0.5 }, 500)).toBeCloseTo(0.0002, 12);
  });
});
