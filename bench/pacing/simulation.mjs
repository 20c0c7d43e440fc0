// bench/pacing/simulation.mjs: simulated days of fetch traffic against the built campaign index,
// with a controllable clock, to see how campaigns with caps deliver under each pacing (D16). The
// index (`CampaignIndex`), the plans and the pacing decisions (`domain/pacing.js`) are the
// product's own; what is simulated is the traffic (a daily curve with noise), the partners
// displaying every campaign returned, and the store's cap counters. Used by `run.mjs`
// (`npm run simulate:pacing`) and by `apps/server/test/pacing-simulation.test.ts`.
import { CampaignIndex } from '../../apps/server/dist/serving/campaign-index.js';
import { NO_CAPS } from '../../apps/server/dist/domain/campaigns.js';
import {
  NO_DRAWS,
  PACING_STEP_MS,
  UNPACED,
  learnTraffic,
  paceOf,
  recordDraws,
  planOf,
  plannedBy,
  recentFetches,
  recentWindow,
  samePace,
} from '../../apps/server/dist/domain/pacing.js';
import { mulberry32 } from '../seed.mjs';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const QUARTER = HOUR / 4;

/**
 * A weekday of a content site, by UTC hour: quiet at night, a morning rise, a lunch bump and an
 * evening peak at 20:00 (share of the day's fetches in each hour, summing to 1).
 */
export const DAILY_CURVE = normalised([
  1.2, 0.8, 0.6, 0.5, 0.5, 0.7, 1.4, 2.8, 4.2, 4.8, 5.0, 5.3, 6.0, 5.6, 5.0, 4.8, 5.0, 5.6, 6.4, 7.2, 7.8,
  7.0, 4.6, 2.4,
]);

function normalised(weights) {
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((weight) => weight / sum);
}

/** The curve with every hour `hours` later (the traffic's peak comes that much after the forecast's). */
export function shifted(curve, hours) {
  return curve.map((_, hour) => curve[(hour - hours + 24) % 24]);
}

/**
 * Simulates `days` days from a UTC midnight in steps of `PACING_STEP_MS`. `placements`: id →
 * fetches a day (each asking for one campaign, `limit`), spread over the hours by `actual` with
 * `noise` (each hour's volume multiplied by 1 ± noise, then each step's count drawn around its
 * share). `campaigns`: { id, placements, pacing, weight?, priority?, daily?, total? } with impression
 * caps; `forecast` is the traffic the plans expect (what the product learns from recent days).
 * Every returned campaign is displayed and its impression counted, unless its cap was reached
 * (then it is stored past its cap and not counted, and the campaign leaves the index as the
 * store's cap would make it). Returns, per campaign, what it delivered and, at the end of every
 * hour, its delivery next to its plan's; and (`fetchedByHour`) each placement's fetches so far at
 * the end of every hour.
 */
export function simulate({
  days = 1,
  placements,
  campaigns,
  forecast = DAILY_CURVE,
  actual = DAILY_CURVE,
  noise = 0.1,
  seed = 1,
  limit = 1,
  history,
}) {
  const random = mulberry32(seed);
  const start = Date.UTC(2026, 10, 2);
  const end = start + days * DAY;
  const records = campaigns.map((spec) => campaignOf(spec, start, end));
  const byId = new Map(records.map((record, i) => [record.id, { spec: campaigns[i], record }]));
  const index = CampaignIndex.from(new Set(Object.keys(placements)), records, start);
  const state = new Map(
    campaigns.map((spec) => [
      spec.id,
      { delivered: 0, today: 0, day: 0, pace: UNPACED, done: false, hourly: [], plans: null, mostAhead: 0 },
    ]),
  );
  const hourlyVolume = (placement, hour) => {
    const wobble = 1 + noise * (2 * random() - 1);
    return (placements[placement] * actual[hour] * wobble) / (HOUR / PACING_STEP_MS);
  };
  let volumes = new Map();
  const fetched = Object.fromEntries(Object.keys(placements).map((p) => [p, 0]));
  // Learning (`history` hours of past traffic, 0 for a fresh store): each placement's fetches by
  // quarter hour, as the store's rollups hold its impressions (every fetch is displayed); the
  // campaigns' plans and expected fetches are learnt from them as `PacingPlanner` learns them.
  const learning = history !== undefined;
  const slots = Object.fromEntries(Object.keys(placements).map((p) => [p, []]));
  if (learning) {
    for (let at = start - history * HOUR; at < start; at += QUARTER) {
      const hour = Math.floor((at - start + DAY) / HOUR) % 24;
      for (const p of Object.keys(placements))
        slots[p].push({ slot: at, impressions: Math.round((placements[p] * actual[hour]) / 4) });
    }
  }
  // And what the store's per-minute rollups hold of the day so far: each placement's impressions
  // (every campaign returned and displayed) by minute, from which the job reads their recent fetches.
  const byMinute = Object.fromEntries(Object.keys(placements).map((p) => [p, new Map()]));
  const recentOf = (spec, now) => {
    const { since, until } = recentWindow(now);
    const minutes = [];
    for (let minute = since; minute < until; minute += 60_000) {
      const impressions = spec.placements.reduce((sum, p) => sum + (byMinute[p].get(minute) ?? 0), 0);
      minutes.push({ slot: minute, impressions });
    }
    return recentFetches(minutes, now);
  };
  const quarterStart = Object.fromEntries(Object.keys(placements).map((p) => [p, 0]));
  const fetchedByHour = Object.fromEntries(Object.keys(placements).map((p) => [p, []]));
  for (let now = start; now < end; now += PACING_STEP_MS) {
    const day = Math.floor((now - start) / DAY);
    const hour = Math.floor((now - start - day * DAY) / HOUR);
    if (learning && (now - start) % QUARTER === 0 && now > start) {
      for (const p of Object.keys(placements)) {
        slots[p].push({ slot: now - QUARTER, impressions: fetched[p] - quarterStart[p] });
        quarterStart[p] = fetched[p];
      }
    }
    if ((now - start) % HOUR === 0) {
      if (now > start) for (const p of Object.keys(placements)) fetchedByHour[p].push(fetched[p]);
      volumes = new Map(Object.keys(placements).map((p) => [p, hourlyVolume(p, hour)]));
      for (const [id, { spec, record }] of byId) newHour(id, spec, record, state.get(id), now, day);
    }
    // The pacing step, as `PacingJob` runs it on every instance, with the fetches its placements
    // are expected to see in the next step (from the forecast, as the job has them from the traffic
    // it learnt).
    for (const [id, { spec, record }] of byId) {
      const s = state.get(id);
      if (spec.pacing !== 'even' || s.done) continue;
      const caps = pacedCaps(spec, s);
      for (const { plan, delivered } of caps)
        s.mostAhead = Math.max(s.mostAhead, (delivered - plannedBy(plan, now)) / plan.cap);
      const expected = learning
        ? s.learnt.known
          ? (s.learnt.hourly[hour] * PACING_STEP_MS) / HOUR
          : 0
        : spec.placements.reduce(
            (sum, p) => sum + (placements[p] * forecast[hour]) / (HOUR / PACING_STEP_MS),
            0,
          );
      // The chance it was drawn at since the last step: none before its first (as the job has it).
      if (learning) s.draws = recordDraws(s.draws ?? NO_DRAWS, s.draws ? s.pace.chance : 0, s.delivered);
      const recent = learning ? recentOf(spec, now) : 0;
      const pace = paceOf(caps, now, PACING_STEP_MS, expected, learning ? s.draws : undefined, recent);
      if (!samePace(pace, s.pace)) {
        s.pace = pace;
        index.apply(id, record, now, pace);
      }
    }
    for (const [placement, volume] of volumes) {
      const fetches = Math.floor(volume) + (random() < volume % 1 ? 1 : 0);
      fetched[placement] += fetches;
      const minute = Math.floor(now / 60_000) * 60_000;
      for (let i = 0; i < fetches; i++) {
        for (const served of index.select({ placement, limit }, now, undefined, random)) {
          byMinute[placement].set(minute, (byMinute[placement].get(minute) ?? 0) + 1);
          const { spec, record } = byId.get(served.id);
          const s = state.get(served.id);
          if (reached(spec, s)) continue; // stored past its cap, not counted
          s.delivered++;
          s.today++;
          if (reached(spec, s)) {
            // The store completes it (total cap) or holds it until midnight (daily cap).
            s.done = spec.total !== undefined && s.delivered >= spec.total;
            const until = s.done ? null : start + (day + 1) * DAY;
            const stopped = s.done ? { ...record, status: 'completed' } : { ...record, cappedUntil: until };
            index.apply(served.id, stopped, now, s.pace);
          }
        }
      }
    }
  }
  for (const [id, { spec }] of byId) newHour(id, spec, null, state.get(id), end, days);
  for (const p of Object.keys(placements)) fetchedByHour[p].push(fetched[p]);
  const results = campaigns.map((spec) => {
    const s = state.get(spec.id);
    return { id: spec.id, delivered: s.delivered, hourly: s.hourly, mostAhead: s.mostAhead };
  });
  return Object.assign(results, { fetchedByHour });

  /** At each hour's start: records the hour that ended; at each day's start, a new daily plan. */
  function newHour(id, spec, record, s, now, day) {
    if (now > start) {
      const entry = { at: now, delivered: s.delivered };
      for (const key of ['daily', 'total']) {
        const plan = s.plans?.[key];
        if (plan)
          entry[key] = { delivered: key === 'daily' ? s.today : s.delivered, planned: plannedBy(plan, now) };
      }
      s.hourly.push(entry);
    }
    if (record === null) return;
    // The job learns its placements' traffic again every hour, and plans on the new shape.
    if (learning) s.learnt = learnt(spec, now);
    if (learning || day !== s.day || now === start) {
      const newDay = day !== s.day || now === start;
      s.day = day;
      if (newDay) s.today = 0;
      const dayStart = start + day * DAY;
      const shape = learning ? s.learnt.hourly : hourly(forecast);
      s.plans = {
        daily: spec.daily === undefined ? null : planOf(spec.daily, dayStart, dayStart + DAY, shape, 'UTC'),
        total: spec.total === undefined ? null : planOf(spec.total, start, end, shape, 'UTC'),
      };
      if (newDay && spec.daily !== undefined && !s.done) {
        // Midnight: the daily hold ends, and the campaign is back in the index.
        index.apply(id, record, now, s.pace);
      }
    }
  }

  /** What `PacingPlanner` learns at `now` of the traffic of a campaign's placements (their slots summed). */
  function learnt(spec, now) {
    const merged = new Map();
    for (const p of spec.placements)
      for (const { slot, impressions } of slots[p])
        if (slot >= now - 7 * DAY) merged.set(slot, (merged.get(slot) ?? 0) + impressions);
    const rows = [...merged].map(([slot, impressions]) => ({ slot, impressions }));
    const known = rows.some((row) => row.impressions > 0 && row.slot <= now - DAY);
    return { hourly: learnTraffic(rows, now - 7 * DAY, now, 'UTC'), known };
  }
}

function hourly(curve) {
  return curve.map((share) => share * 24);
}

function pacedCaps(spec, s) {
  const caps = [];
  if (s.plans.daily) caps.push({ plan: s.plans.daily, delivered: s.today });
  if (s.plans.total) caps.push({ plan: s.plans.total, delivered: s.delivered });
  return caps;
}

function reached(spec, s) {
  return (
    (spec.daily !== undefined && s.today >= spec.daily) ||
    (spec.total !== undefined && s.delivered >= spec.total)
  );
}

function campaignOf(spec, start, end) {
  return {
    id: spec.id,
    advertiserId: 1,
    title: `Campaign ${spec.id}`,
    description: null,
    category: null,
    destinationUrl: 'https://example.com/',
    status: 'running',
    priority: spec.priority ?? 5,
    weight: spec.weight ?? 1,
    placements: spec.placements,
    countries: [],
    devices: [],
    startAt: start,
    endAt: end,
    timeZone: 'UTC',
    schedule: null,
    frequencyCaps: [],
    caps: { ...NO_CAPS, impressionsDaily: spec.daily ?? null, impressionsTotal: spec.total ?? null },
    cappedUntil: null,
    rejectionReason: null,
    createdAt: start,
    updatedAt: start,
  };
}

/**
 * The largest distance, in shares of the cap, between a campaign's delivery and its plan at the end
 * of any hour (daily plans: within each day; a total plan: over the flight).
 */
export function largestDeviation(result, spec) {
  let largest = 0;
  for (const entry of result.hourly) {
    for (const key of ['daily', 'total']) {
      const point = entry[key];
      const cap = spec[key];
      if (point && cap) largest = Math.max(largest, Math.abs(point.delivered - point.planned) / cap);
    }
  }
  return largest;
}
