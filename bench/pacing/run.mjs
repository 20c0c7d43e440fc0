// bench/pacing/run.mjs (`npm run simulate:pacing`): prints how campaigns with caps deliver over
// simulated days of traffic under each pacing (D16), from `simulation.mjs`. Not a benchmark of
// speed: a table of delivered impressions against caps and plans, deterministic for a seed
// (`--seed N`, default 7). `--json` prints the figures as JSON instead (the test reads them).
import { parseArgs } from 'node:util';
import { DAILY_CURVE, largestDeviation, shifted, simulate } from './simulation.mjs';

const { values: options } = parseArgs({
  options: { seed: { type: 'string', default: '7' }, json: { type: 'boolean', default: false } },
});
const seed = Number(options.seed);

/** Fetches a day per placement: every campaign below is sized against it. */
const F = 100_000;
const pct = (value) => `${(100 * value).toFixed(1)}%`;

const scenarios = [
  {
    name: 'alone on a placement, forecast right',
    placements: { a: F, b: F, c: F, d: F },
    campaigns: [
      { id: 1, placements: ['a'], pacing: 'even', daily: 0.1 * F },
      { id: 2, placements: ['b'], pacing: 'even', daily: 0.5 * F },
      { id: 3, placements: ['c'], pacing: 'even', daily: 1.5 * F },
      { id: 4, placements: ['d'], pacing: 'asap', daily: 0.5 * F },
    ],
  },
  {
    name: "alone on a placement, the day's peak 3 hours after the forecast",
    placements: { a: F, b: F },
    actual: shifted(DAILY_CURVE, 3),
    campaigns: [
      { id: 1, placements: ['a'], pacing: 'even', daily: 0.1 * F },
      { id: 2, placements: ['b'], pacing: 'even', daily: 0.5 * F },
    ],
  },
  {
    name: 'three sharing a placement that cannot fill them (caps 150% of it)',
    placements: { a: F },
    campaigns: [
      { id: 1, placements: ['a'], pacing: 'even', daily: 0.3 * F },
      { id: 2, placements: ['a'], pacing: 'even', daily: 0.5 * F },
      { id: 3, placements: ['a'], pacing: 'even', daily: 0.7 * F },
    ],
  },
  {
    name: 'a total cap over a 7-day flight',
    days: 7,
    placements: { a: F },
    campaigns: [{ id: 1, placements: ['a'], pacing: 'even', total: 0.3 * 7 * F }],
  },
];

const report = scenarios.map((scenario) => {
  const results = simulate({ seed, ...scenario });
  return {
    name: scenario.name,
    days: scenario.days ?? 1,
    fetchedByHour: results.fetchedByHour,
    campaigns: scenario.campaigns.map((spec, i) => {
      const result = results[i];
      const cap = spec.daily ?? spec.total;
      return {
        id: spec.id,
        pacing: spec.pacing,
        cap,
        delivered: result.delivered,
        // The most delivered in any one day (a daily cap's ceiling).
        mostInADay: Math.max(...result.hourly.map((entry) => entry.daily?.delivered ?? 0)),
        furthestFromPlan: largestDeviation(result, spec),
        byHour: result.hourly.map((entry) => (entry.daily ?? entry.total)?.delivered ?? entry.delivered),
      };
    }),
  };
});

if (options.json) {
  console.log(JSON.stringify({ seed, fetchesPerDay: F, scenarios: report }));
} else {
  for (const scenario of report) {
    console.log(
      `\n${scenario.name} (${scenario.days} day(s), ${F.toLocaleString('en-US')} fetches a day per placement, seed ${seed})`,
    );
    console.log(
      '  campaign  pacing       cap   delivered   of cap   furthest from plan   delivered by hour 3, 6, … 24 (% of cap)',
    );
    for (const c of scenario.campaigns) {
      const byHour = c.byHour
        .filter((_, h) => h % 3 === 2)
        .slice(0, 8)
        .map((delivered) => pct(delivered / c.cap).padStart(6))
        .join(' ');
      console.log(
        `  ${String(c.id).padEnd(8)}  ${c.pacing.padEnd(6)}  ${c.cap.toLocaleString('en-US').padStart(9)}  ${c.delivered.toLocaleString('en-US').padStart(10)}  ${pct(c.delivered / c.cap).padStart(7)}  ${pct(c.furthestFromPlan).padStart(19)}   ${byHour}`,
      );
    }
  }
  console.log(
    '\nfurthest from plan: the largest gap, at the end of any hour, between delivery and the plan, as a share of the cap.',
  );
}
