import type { Micros } from './money.js';
import type { Price } from './prices.js';
import { runsInHour, weekHours, type Schedule } from './schedules.js';
import {
  localDate,
  localHour,
  localHourOfWeek,
  startOfNextLocalDay,
  startOfThisLocalDay,
} from './time-zones.js';

/**
 * Pacing (D16): how a campaign with a cap or a spend budget (D18) spends it. `asap` serves it
 * whenever it is eligible until the cap or budget is reached (the default, and what Placard always
 * did); `even` spreads each cap and budget over its period (a daily one over the campaign's local
 * day, a total one over its flight) in proportion to the traffic expected in each part of the
 * period, so that it is reached near the period's end.
 */
export const PACINGS = ['asap', 'even'] as const;
export type Pacing = (typeof PACINGS)[number];

/** How often an instance decides again which even campaigns to hold back (`jobs/pacing-job.ts`). */
export const PACING_STEP_MS = 10_000;

/** Plans are built of quarter hours: every UTC offset in use is a multiple of one. */
const SLOT_MS = 15 * 60_000;

/** Most draw tickets an even campaign behind its plan gets (see `Pace.weightFactor`). */
export const MAX_WEIGHT_FACTOR = 10_000;

/** Impressions (or clicks) still needed per draw ticket of an even campaign behind its plan. */
export const UNITS_PER_TICKET = 100;

/**
 * Expected traffic by local hour of the day: 24 non-negative numbers, in any unit (only their
 * proportions matter). Learnt from the recent impressions of the campaign's placements; flat when
 * there are none.
 */
export type HourlyTraffic = readonly number[];

export const FLAT_TRAFFIC: HourlyTraffic = Object.freeze(Array.from({ length: 24 }, () => 1));

const HOUR_MS = 3_600_000;

/** Impressions in the quarter hour starting at `slot` (the store's rollups, summed). */
export interface TrafficSlot {
  slot: number;
  impressions: number;
}

/**
 * The expected traffic by local hour, learnt from the impressions of `slots` (quarter hours in
 * [since, now)). Each hour counts as often as it was seen: the history starts at the first
 * quarter hour with traffic (or `since`), and an hour's estimate is its impressions divided by how
 * many times it came round since then, so with a day and a half of history the hours seen twice do
 * not weigh double. An hour seen less than once in full is completed from `prior` (flat unless
 * given), scaled to the level of the traffic seen: with no history the plan is the prior's, and
 * with minutes of history the hours not yet seen weigh what the prior says, never almost nothing
 * (which put a day's cap into the first hours a placement was seen).
 */
export function learnTraffic(
  slots: readonly TrafficSlot[],
  since: number,
  now: number,
  timeZone: string,
  prior: HourlyTraffic = FLAT_TRAFFIC,
): HourlyTraffic {
  let first = Infinity;
  for (const { slot, impressions } of slots) if (impressions > 0 && slot < first) first = slot;
  if (first === Infinity) return prior;
  const seen = Array.from({ length: 24 }, () => 0);
  const counted = Array.from({ length: 24 }, () => 0);
  for (const { slot, impressions } of slots) {
    const hour = localHour(slot, timeZone);
    counted[hour] = (counted[hour] as number) + impressions;
  }
  // How many times each local hour came round (in hours) since the history began.
  for (let at = Math.max(since, first); at < now;) {
    const next = Math.min(now, (Math.floor(at / SLOT_MS) + 1) * SLOT_MS);
    const hour = localHour(at, timeZone);
    seen[hour] = (seen[hour] as number) + (next - at) / HOUR_MS;
    at = next;
  }
  let total = 0;
  let expected = 0;
  for (let hour = 0; hour < 24; hour++) {
    total += counted[hour] as number;
    expected += (prior[hour] ?? 0) * (seen[hour] as number);
  }
  // Impressions per hour for each unit of the prior, from what was seen.
  const level = expected > 0 ? total / expected : 0;
  return counted.map((count, hour) => {
    const times = seen[hour] as number;
    return times >= 1 ? count / times : count + (1 - times) * level * (prior[hour] ?? 0);
  });
}

/**
 * The ideal delivery of one cap over its period: from `from` to `to`, the share of the period's
 * expected traffic that has passed at the end of each quarter hour (`cumulative[i]`, the last 1).
 */
export interface PacingPlan {
  from: number;
  to: number;
  cap: number;
  cumulative: Float64Array;
}

/**
 * The plan of a cap over [from, to) for traffic shaped like `traffic` in `timeZone`, over the hours
 * of the week its `schedule` runs (null: every hour): a quarter hour outside them gets no share, so
 * a daily cap of a campaign scheduled 8 hours a day is spread over those 8. A period without any
 * scheduled hour (a day it does not run) is planned as if it ran every hour: it is not served then.
 */
export function planOf(
  cap: number,
  from: number,
  to: number,
  traffic: HourlyTraffic,
  timeZone: string,
  schedule: Schedule | null = null,
): PacingPlan {
  const slots = Math.max(1, Math.ceil((to - from) / SLOT_MS));
  const cumulative = new Float64Array(slots);
  const usable = traffic.some((weight) => weight > 0) ? traffic : FLAT_TRAFFIC;
  const hours = schedule === null ? null : weekHours(schedule);
  let sum = 0;
  for (let i = 0; i < slots; i++) {
    const start = from + i * SLOT_MS;
    const length = Math.min(to, start + SLOT_MS) - start;
    if (hours === null || runsInHour(hours, localHourOfWeek(start, timeZone)))
      // Hours with no traffic seen still get a little, so a plan never stands still for hours and
      // then asks for everything at once if the traffic comes after all.
      sum += (Math.max(usable[localHour(start, timeZone)] ?? 0, 1e-3) * length) / SLOT_MS;
    cumulative[i] = sum;
  }
  if (sum === 0) return planOf(cap, from, to, traffic, timeZone);
  for (let i = 0; i < slots; i++) (cumulative[i] as number) /= sum;
  return { from, to, cap, cumulative };
}

/** What the plan has delivered by `at`: the cap times the expected share passed, within the slot pro rata. */
export function plannedBy(plan: PacingPlan, at: number): number {
  if (at <= plan.from) return 0;
  if (at >= plan.to) return plan.cap;
  const slot = Math.floor((at - plan.from) / SLOT_MS);
  const before = slot === 0 ? 0 : (plan.cumulative[slot - 1] as number);
  const after = plan.cumulative[slot] as number;
  const slotEnd = Math.min(plan.to, plan.from + (slot + 1) * SLOT_MS);
  const slotStart = plan.from + slot * SLOT_MS;
  return plan.cap * (before + ((after - before) * (at - slotStart)) / (slotEnd - slotStart));
}

/** What a paced limit counts: a cap's impressions or clicks, or a budget's spend in micros. */
export type PacedUnit = 'impressions' | 'clicks' | 'micros';

/** Why pacing holds a campaign: the cap or budget furthest ahead of its plan. */
export interface PacingHold {
  /** What that cap's (or budget's) counter holds for its period. */
  delivered: number;
  /** What its plan expects by now (whole micros for a budget, floored). */
  planned: number;
  cap: number;
  /** What the three count: `micros` for a budget. */
  unit: PacedUnit;
  /** When the plan reaches what was delivered, less a step: the step from which it is served again. */
  releasedAt: number;
}

/** The first instant at which the plan has delivered `amount` (its end for the cap or more). */
export function whenPlanned(plan: PacingPlan, amount: number): number {
  const share = amount / plan.cap;
  if (share <= 0) return plan.from;
  for (let slot = 0; slot < plan.cumulative.length; slot++) {
    const after = plan.cumulative[slot] as number;
    if (after < share) continue;
    const before = slot === 0 ? 0 : (plan.cumulative[slot - 1] as number);
    const slotStart = plan.from + slot * SLOT_MS;
    const slotEnd = Math.min(plan.to, slotStart + SLOT_MS);
    return Math.ceil(slotStart + ((share - before) / (after - before)) * (slotEnd - slotStart));
  }
  return plan.to;
}

/** What the pacing of one campaign decided for the next step. */
export interface Pace {
  /** Ahead of its plan: not served until the next step. */
  held: boolean;
  /** With `held`: by how much, and until when. */
  hold?: PacingHold;
  /**
   * Its weight is multiplied by this while behind its plan: one draw ticket per `UNITS_PER_TICKET`
   * units it still needs (at least 1, at most `MAX_WEIGHT_FACTOR`). Among even campaigns competing
   * for a placement that cannot fill them all, each is then drawn in proportion to what it still
   * needs, so they all fall short by about the same share of their caps.
   */
  weightFactor: number;
  /**
   * The chance it is drawn when a fetch could return it (1: always). Released from a hold, a
   * campaign would otherwise take every fetch of a busy placement for a whole step; this spreads
   * what its plan allows in the next step over the fetches expected then.
   */
  chance: number;
}

export const UNPACED: Pace = Object.freeze({ held: false, weightFactor: 1, chance: 1 });

/** Whether two paces serve a campaign alike (only a change is applied to the index). */
export function samePace(a: Pace, b: Pace): boolean {
  return a.held === b.held && a.weightFactor === b.weightFactor && a.chance === b.chance;
}

/** One cap's (or budget's) plan and what has been delivered (or spent) against it so far. */
export interface PacedCap {
  plan: PacingPlan;
  delivered: number;
  /** Impressions when left out. */
  unit?: PacedUnit;
  /**
   * For a budget (`micros`): what one unit of delivery costs at the price in force, an impression
   * for `cpm` (its CPM over 1,000) or a click for `cpc`, as a fraction `micros / per`: what the
   * budget still needs, told in units, gives its draw tickets and chance like a cap's.
   */
  unitCost?: { micros: number; per: number };
}

/**
 * Where a paced limit's plan is at `at`: for a cap, the plan's exact share; for a budget, whole
 * micros (floored), so that spend, a whole number of micros, is compared with it as integers.
 */
export function plannedAmount(cap: PacedCap, at: number): number {
  const planned = plannedBy(cap.plan, at);
  return cap.unit === 'micros' ? Math.min(cap.plan.cap, Math.floor(planned)) : planned;
}

/** An amount of a paced limit in units of delivery (a budget's micros over what a unit costs). */
function inUnits(cap: PacedCap, amount: number): number {
  if (cap.unit !== 'micros' || cap.unitCost === undefined) return amount;
  return (amount * cap.unitCost.per) / cap.unitCost.micros;
}

/**
 * A budget of `budget` micros to spread over [from, to) like a cap, against `spent` so far, for a
 * campaign at `price`; null for a price that spends nothing per event (`flat`, none), which has
 * nothing to spread.
 */
export function budgetCap(
  budget: Micros,
  spent: Micros,
  price: Price | null,
  plan: (cap: number) => PacingPlan,
): PacedCap | null {
  if (price === null || price.model === 'flat' || price.amountMicros <= 0) return null;
  const unitCost = { micros: price.amountMicros, per: price.model === 'cpm' ? 1000 : 1 };
  return { plan: plan(budget), delivered: spent, unit: 'micros', unitCost };
}

/**
 * The pace of a campaign from its caps' and budgets' plans: held if any is at or past where its
 * plan will be at the end of the next step (it would only get further ahead), with the hold of the
 * one furthest ahead (released last); otherwise served, with draw tickets for what the furthest
 * behind still needs. A budget's spend and plan are whole micros compared as integers. A campaign
 * past its cap or budget is the cap's or budget's business, not pacing's.
 */
export function paceOf(
  caps: readonly PacedCap[],
  now: number,
  stepMs = PACING_STEP_MS,
  /** The fetches of its placements expected in the next step, when known (0: unknown). */
  expectedFetches = 0,
  /**
   * What its own draws showed of its placements' fetches (`recordDraws`). Given, a campaign whose
   * fetches are not known starts cautiously (`chanceOf`); not given, it is released at full chance.
   */
  draws?: DrawHistory,
  /** The fetches a step its placements are seen to have now at the least (`recentFetches`; 0: none seen). */
  recent = 0,
): Pace {
  if (caps.length === 0) return UNPACED;
  let needed = 0;
  let allowance = Infinity;
  let hold: PacingHold | undefined;
  for (const cap of caps) {
    const { plan, delivered } = cap;
    const next = plannedAmount(cap, now + stepMs);
    if (delivered >= next) {
      const releasedAt = Math.max(now, whenPlanned(plan, delivered) - stepMs);
      if (hold === undefined || releasedAt > hold.releasedAt) {
        const planned = plannedAmount(cap, now);
        hold = { delivered, planned, cap: plan.cap, unit: cap.unit ?? 'impressions', releasedAt };
      }
      continue;
    }
    needed = Math.max(needed, inUnits(cap, plan.cap - delivered));
    allowance = Math.min(allowance, inUnits(cap, next - delivered));
  }
  if (hold !== undefined) return { held: true, weightFactor: 1, chance: 0, hold };
  const tickets = Math.ceil(needed / UNITS_PER_TICKET);
  const chance =
    draws !== undefined
      ? chanceOf(allowance, expectedFetches, draws, recent)
      : expectedFetches > 0
        ? Math.min(1, allowance / expectedFetches)
        : 1;
  return { held: false, weightFactor: Math.min(MAX_WEIGHT_FACTOR, Math.max(1, tickets)), chance };
}

/**
 * What the draws of a campaign over its past steps showed of the fetches it could have been
 * returned by: with chance c for a step it got about c × fetches impressions, so impressions over
 * the chances summed estimate the fetches a step. Both decay by `DRAW_MEMORY` a step, so the
 * estimate follows the traffic through the day (about a quarter hour's memory).
 */
export interface DrawHistory {
  /** The chances it was drawn at, summed over past steps (decayed). */
  exposure: number;
  /** The impressions it got in those steps (decayed). */
  served: number;
  /** Its chance in the last step it was not held (0: not yet drawn), which the next may double. */
  chance: number;
  /** Its impressions counter at the last step (null: not yet seen). */
  count: number | null;
}

export const NO_DRAWS: DrawHistory = Object.freeze({ exposure: 0, served: 0, chance: 0, count: null });

/** The share of the draw history kept at each step: a half-life of about 70 steps (12 minutes). */
export const DRAW_MEMORY = 0.99;

/**
 * The chance a campaign whose placements' fetches are unknown starts at, and the most its chance
 * grows by a step until its draws show them. Released at full chance, a small cap on a busy
 * placement took a whole step of its traffic at once (27% of a cap of 1,000 on a million fetches
 * a day); doubled from 1/1,000 a step, a campaign that needs every fetch has it after 10 steps.
 */
export const START_CHANCE = 0.001;
export const CHANCE_GROWTH = 2;

/**
 * The pace of an even campaign no pacing step has decided yet (just created, resumed or made even,
 * or on an instance just started): drawn at `START_CHANCE` until the next step decides. Served
 * unpaced meanwhile, it took every fetch of its placements for up to a step, which on a placement
 * of a million fetches a day is a fifth of a daily cap of 1,000.
 */
export const FIRST_PACE: Pace = Object.freeze({ held: false, weightFactor: 1, chance: START_CHANCE });

/** The history after a step in which it was drawn at `chance` and its impressions reached `count`. */
export function recordDraws(history: DrawHistory, chance: number, count: number): DrawHistory {
  const served = history.count === null ? 0 : Math.max(0, count - history.count);
  return {
    exposure: history.exposure * DRAW_MEMORY + chance,
    served: history.served * DRAW_MEMORY + served,
    // A hold is no evidence the chance was too high: released, it resumes where it was.
    chance: chance > 0 ? chance : history.chance,
    count,
  };
}

/**
 * The chance for the next step of a campaign behind its plan that the plan allows `allowance` more
 * in it: what the plan allows over the fetches its placements are expected to see in the step, and
 * never over fewer than `recent`, the impressions its placements had in the last minutes (which
 * fetches are at least). Expected from a full day of history (or the operator's prior) when known;
 * otherwise the more of `recent` and what its own draws showed, once they showed any. Until either
 * shows any (no or barely any history) it starts at
 * `START_CHANCE` and doubles each step it stays behind. Either way it never more than doubles from
 * one step to the next while the fetches are not known from history, so a first impression won at
 * a tiny chance (which overstates the chance needed) cannot release it at once; and a small cap
 * drawn rarely, whose few impressions understate its placements' fetches, is not released at many
 * times the chance it needs (1,000 a day on a placement shared with 100,000 a day ran 8% of its cap
 * ahead of its plan).
 */
export function chanceOf(allowance: number, expectedFetches: number, draws: DrawHistory, recent = 0): number {
  if (expectedFetches > 0) return Math.min(1, allowance / Math.max(expectedFetches, recent));
  const grown = Math.min(1, Math.max(START_CHANCE, draws.chance * CHANCE_GROWTH));
  const fetches = Math.max(recent, draws.served > 0 ? draws.served / draws.exposure : 0);
  if (fetches <= 0) return grown;
  return Math.min(grown, allowance / fetches);
}

/** How far back `recentFetches` looks: a few whole minutes of the per-minute rollups. */
export const RECENT_TRAFFIC_MS = 5 * 60_000;

/** The whole minutes `recentFetches` reads at `now`: the last `RECENT_TRAFFIC_MS` before this minute. */
export function recentWindow(now: number): { since: number; until: number } {
  const until = Math.floor(now / 60_000) * 60_000;
  return { since: until - RECENT_TRAFFIC_MS, until };
}

/**
 * The fetches a step of `stepMs` that placements have now at the least, from their impressions by
 * minute (`minutes`, the store's rollups) in `recentWindow`: every impression was fetched, though a
 * fetch may return nothing or not be displayed. Over the minutes since the first with impressions
 * in the window, so a placement first seen a minute ago is not taken for one fifth as busy (which
 * would release a campaign at five times the chance it needs). 0 when none were seen.
 */
export function recentFetches(minutes: readonly TrafficSlot[], now: number, stepMs = PACING_STEP_MS): number {
  const { since, until } = recentWindow(now);
  let first = until;
  let impressions = 0;
  for (const { slot, impressions: count } of minutes) {
    if (slot < since || slot >= until || count <= 0) continue;
    impressions += count;
    first = Math.min(first, slot);
  }
  return impressions > 0 ? (impressions * stepMs) / (until - first) : 0;
}

/** The period of a campaign's pacing: its local day for daily caps, its flight for total caps. */
export interface PacingPeriods {
  /** The local day `now` falls in (counter key `YYYY-MM-DD`) and its bounds. */
  day: { key: string; from: number; to: number };
  /** The flight, when the campaign has both ends; a total cap without an end cannot be spread. */
  flight: { from: number; to: number } | null;
}

export function periodsAt(
  now: number,
  timeZone: string,
  startAt: number | null,
  endAt: number | null,
  createdAt: number,
): PacingPeriods {
  return {
    day: {
      key: localDate(now, timeZone),
      from: startOfThisLocalDay(now, timeZone),
      to: startOfNextLocalDay(now, timeZone),
    },
    flight: endAt === null ? null : { from: startAt ?? createdAt, to: endAt },
  };
}

/** A campaign's caps (`Caps` of campaigns.ts, which imports this module). */
interface CapLimits {
  impressionsTotal: number | null;
  clicksTotal: number | null;
  impressionsDaily: number | null;
  clicksDaily: number | null;
}

/** A campaign's spend budgets (`Budget` of campaigns.ts). */
interface BudgetLimits {
  totalMicros: Micros | null;
  dailyMicros: Micros | null;
}

/**
 * Whether `even` can spread these caps and budgets: a daily cap or budget, or a total one over a
 * flight with an end.
 */
export function canPaceEvenly(caps: CapLimits, endAt: number | null, budget?: BudgetLimits): boolean {
  const daily =
    caps.impressionsDaily !== null || caps.clicksDaily !== null || (budget?.dailyMicros ?? null) !== null;
  const total =
    caps.impressionsTotal !== null || caps.clicksTotal !== null || (budget?.totalMicros ?? null) !== null;
  return daily || (total && endAt !== null);
}

export const PACING_NEEDS_CAP_MESSAGE =
  'even needs a daily cap or budget, or a total cap or budget and an end';
