import { localDate, localHour, startOfNextLocalDay, startOfThisLocalDay } from './time-zones.js';

/**
 * Pacing (D16): how a campaign with a cap spends it. `asap` serves it whenever it is eligible until
 * the cap is reached (the default, and what Placard always did); `even` spreads each cap over its
 * period (a daily cap over the campaign's local day, a total cap over its flight) in proportion to
 * the traffic expected in each part of the period, so that it is reached near the period's end.
 */
export const PACINGS = ['asap', 'even'] as const;
export type Pacing = (typeof PACINGS)[number];

/** How often an instance decides again which even campaigns to hold back (`services/pacing-job.ts`). */
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

/** The plan of a cap over [from, to) for traffic shaped like `traffic` in `timeZone`. */
export function planOf(
  cap: number,
  from: number,
  to: number,
  traffic: HourlyTraffic,
  timeZone: string,
): PacingPlan {
  const slots = Math.max(1, Math.ceil((to - from) / SLOT_MS));
  const cumulative = new Float64Array(slots);
  const usable = traffic.some((weight) => weight > 0) ? traffic : FLAT_TRAFFIC;
  let sum = 0;
  for (let i = 0; i < slots; i++) {
    const start = from + i * SLOT_MS;
    const length = Math.min(to, start + SLOT_MS) - start;
    // Hours with no traffic seen still get a little, so a plan never stands still for hours and
    // then asks for everything at once if the traffic comes after all.
    sum += (Math.max(usable[localHour(start, timeZone)] ?? 0, 1e-3) * length) / SLOT_MS;
    cumulative[i] = sum;
  }
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

/** What the pacing of one campaign decided for the next step. */
export interface Pace {
  /** Ahead of its plan: not served until the next step. */
  held: boolean;
  /**
   * Its weight is multiplied by this while behind its plan: one draw ticket per `UNITS_PER_TICKET`
   * units it still needs (at least 1, at most `MAX_WEIGHT_FACTOR`). Among even campaigns competing
   * for a placement that cannot fill them all, each is then drawn in proportion to what it still
   * needs, so they all fall short by about the same share of their caps.
   */
  weightFactor: number;
}

export const UNPACED: Pace = Object.freeze({ held: false, weightFactor: 1 });

/** One cap's plan and what has been delivered against it so far. */
export interface PacedCap {
  plan: PacingPlan;
  delivered: number;
}

/**
 * The pace of a campaign from its caps' plans: held if any is at or past where its plan will be
 * at the end of the next step (it would only get further ahead); otherwise served, with draw
 * tickets for what the furthest behind still needs. A campaign past its cap is the cap's business,
 * not pacing's.
 */
export function paceOf(caps: readonly PacedCap[], now: number, stepMs = PACING_STEP_MS): Pace {
  if (caps.length === 0) return UNPACED;
  let needed = 0;
  for (const { plan, delivered } of caps) {
    if (delivered >= plannedBy(plan, now + stepMs)) return { held: true, weightFactor: 1 };
    needed = Math.max(needed, plan.cap - delivered);
  }
  const tickets = Math.ceil(needed / UNITS_PER_TICKET);
  return { held: false, weightFactor: Math.min(MAX_WEIGHT_FACTOR, Math.max(1, tickets)) };
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

/** Whether `even` can spread these caps: a daily cap, or a total cap over a flight with an end. */
export function canPaceEvenly(caps: CapLimits, endAt: number | null): boolean {
  const daily = caps.impressionsDaily !== null || caps.clicksDaily !== null;
  const total = caps.impressionsTotal !== null || caps.clicksTotal !== null;
  return daily || (total && endAt !== null);
}

export const PACING_NEEDS_CAP_MESSAGE = 'even needs a daily cap, or a total cap and an end';
