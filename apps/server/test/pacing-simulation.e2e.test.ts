import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/process.js';

interface CampaignFigures {
  id: number;
  pacing: 'asap' | 'even';
  cap: number;
  delivered: number;
  mostInADay: number;
  furthestFromPlan: number;
  mostAhead: number;
  byHour: number[];
}
interface Scenario {
  name: string;
  fetchedByHour: Record<string, number[]>;
  campaigns: CampaignFigures[];
}

/** `npm run simulate:pacing`'s figures for one seed, as its `--json` prints them. */
function simulation(seed: number): Scenario[] {
  const output = execFileSync(process.execPath, ['bench/pacing/run.mjs', '--json', '--seed', String(seed)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return (JSON.parse(output) as { scenarios: Scenario[] }).scenarios;
}

const last = (values: number[]): number => values[values.length - 1];

/**
 * Pacing (D16) over simulated days of traffic that follows a daily curve with noise, against the
 * built campaign index with a controllable clock (bench/pacing/simulation.mjs): caps at 10%, 50%
 * and 150% of what a placement can deliver, the day's peak later than forecast, campaigns sharing a
 * placement that cannot fill them, a total cap over a 7-day flight, and the traffic learnt as the
 * pacing job learns it from a fresh store with 0, 1 and 24 hours of history. Three seeds.
 */
describe.each([1, 2, 3])('even pacing in a simulated day, seed %i', (seed) => {
  let scenarios: Scenario[];
  beforeAll(() => {
    ensureBuilt();
    scenarios = simulation(seed);
  });
  const campaign = (scenario: number, id: number) =>
    scenarios[scenario].campaigns.find((c) => c.id === id) as CampaignFigures;

  it('delivers at least 99.5% of a daily cap the traffic allows, never more, within 3% of the plan at every hour', () => {
    for (const id of [1, 2]) {
      const c = campaign(0, id);
      expect(c.delivered, `campaign ${id}`).toBeGreaterThanOrEqual(0.995 * c.cap);
      expect(c.mostInADay, `campaign ${id}`).toBeLessThanOrEqual(c.cap);
      expect(c.furthestFromPlan, `campaign ${id}`).toBeLessThanOrEqual(0.03);
      expect(c.mostAhead, `campaign ${id}`).toBeLessThanOrEqual(0.03);
    }
  });

  it('serves a campaign whose cap the traffic cannot reach at every chance it gets', () => {
    const c = campaign(0, 3);
    expect(c.delivered).toBe(last(scenarios[0].fetchedByHour['c']));
    expect(c.delivered).toBeLessThan(c.cap);
  });

  it('leaves asap as it was: every fetch returns the campaign until its cap, hour by hour', () => {
    const c = campaign(0, 4);
    const fetched = scenarios[0].fetchedByHour['d'];
    expect(c.byHour).toEqual(fetched.map((count) => Math.min(c.cap, count)));
    // The cap is spent well before the day ends: what even pacing is for.
    expect(c.byHour.findIndex((delivered) => delivered === c.cap)).toBeLessThan(18);
  });

  it('still delivers at least 97% when the day’s peak comes 3 hours after the forecast', () => {
    for (const id of [1, 2]) {
      const c = campaign(1, id);
      expect(c.delivered, `campaign ${id}`).toBeGreaterThanOrEqual(0.97 * c.cap);
      expect(c.mostInADay, `campaign ${id}`).toBeLessThanOrEqual(c.cap);
    }
  });

  it('makes campaigns sharing a placement that cannot fill them fall short by the same share, within 1 point', () => {
    const shares = scenarios[2].campaigns.map((c) => c.delivered / c.cap);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(0.01);
    // No fetch goes unfilled while all of them are behind; only in the first steps of the day,
    // when they are still on their plans and released gradually, may a few (0.01%).
    const delivered = scenarios[2].campaigns.reduce((sum, c) => sum + c.delivered, 0);
    const fetched = last(scenarios[2].fetchedByHour['a']);
    expect(delivered).toBeLessThanOrEqual(fetched);
    expect(delivered).toBeGreaterThanOrEqual(0.9999 * fetched);
  });

  it('keeps a cap of 1,000 a day on a placement of a million fetches a day within 3% of its plan at every step', () => {
    const c = campaign(3, 1);
    expect(c.delivered).toBeGreaterThanOrEqual(0.995 * c.cap);
    expect(c.mostInADay).toBeLessThanOrEqual(c.cap);
    expect(c.furthestFromPlan).toBeLessThanOrEqual(0.03);
    // Released gradually: never a whole step of the placement's traffic (about 20% of the cap) ahead.
    expect(c.mostAhead).toBeLessThanOrEqual(0.03);
  });

  it.each([
    [0, 5],
    [1, 6],
    [24, 7],
  ])(
    'learns the traffic from a fresh store with %i hour(s) of history: caps of 1,000 to 1,000,000 a day within 3% of the plan at every hour and step',
    (_history, scenario) => {
      const even = scenarios[scenario].campaigns.filter((c) => c.pacing === 'even');
      // Alone on 10 times their caps; 1,000 alone on a million; 1,000 and 100,000 sharing a million.
      expect(even.map((c) => c.cap)).toEqual([1_000, 10_000, 100_000, 1_000_000, 1_000, 1_000, 100_000]);
      for (const c of even) {
        expect(c.delivered, `campaign ${c.id}`).toBeGreaterThanOrEqual(0.995 * c.cap);
        expect(c.mostInADay, `campaign ${c.id}`).toBeLessThanOrEqual(c.cap);
        expect(c.furthestFromPlan, `campaign ${c.id}`).toBeLessThanOrEqual(0.03);
        expect(c.mostAhead, `campaign ${c.id}`).toBeLessThanOrEqual(0.03);
      }
    },
  );

  it('spreads a total cap over a 7-day flight: at least 99.5%, never more, within 3% of the plan at every hour', () => {
    const c = campaign(4, 1);
    expect(c.delivered).toBeGreaterThanOrEqual(0.995 * c.cap);
    expect(c.delivered).toBeLessThanOrEqual(c.cap);
    expect(c.furthestFromPlan).toBeLessThanOrEqual(0.03);
    // Not spent in the first days: after 2 of 7 days, roughly 2/7 of it.
    expect(c.byHour[47] / c.cap).toBeGreaterThan(0.25);
    expect(c.byHour[47] / c.cap).toBeLessThan(0.33);
  });
});
