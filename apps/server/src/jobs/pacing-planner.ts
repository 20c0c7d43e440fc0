import type { Campaign } from '../domain/campaigns.js';
import { micros } from '../domain/money.js';
import {
  NO_DRAWS,
  budgetCap,
  PACING_STEP_MS,
  learnTraffic,
  recentFetches,
  recentWindow,
  recordDraws,
  paceOf,
  periodsAt,
  planOf,
  type DrawHistory,
  type HourlyTraffic,
  type Pace,
  type PacedCap,
  type PacingPlan,
} from '../domain/pacing.js';
import { localDate, localHour } from '../domain/time-zones.js';
import type { Store } from '../store/store.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** How far back the traffic of a campaign's placements is learnt from: a week, so weekdays average out. */
const TRAFFIC_HISTORY_MS = 7 * 24 * HOUR;
/** How long a learnt traffic shape is used before it is read again. */
const TRAFFIC_TTL_MS = HOUR;
/** History shorter than this tells the level of some hours only: the chance is then learnt from draws. */
const FULL_HISTORY_MS = 24 * HOUR;

interface LearntTraffic {
  hourly: HourlyTraffic;
  /** Learnt from a full day of impressions (a count an hour for every hour), not partly the prior's. */
  known: boolean;
  at: number;
}

type Counters = ReadonlyMap<string, { impressions: number; clicks: number; spendMicros: number }>;

/**
 * Plans each cap and spend budget of an even campaign over its period (its local day, or its flight
 * for a total one), within the hours of the week its schedule runs, in proportion to the traffic its placements had at each local hour over the last week, and
 * decides its pace from what it delivered (`domain/pacing.ts`). Learnt traffic shapes and plans are
 * kept between steps.
 */
export class PacingPlanner {
  private readonly traffic = new Map<string, LearntTraffic>();
  private readonly plans = new Map<string, PacingPlan>();
  /** What each campaign's draws showed of its placements' fetches, and its last chance. */
  private readonly draws = new Map<number, DrawHistory>();
  private lastPaces = new Map<number, Pace>();
  /** The recent fetches of each set of placements, with the end of the minutes they were read over. */
  private readonly recent = new Map<string, { until: number; fetches: number }>();

  constructor(
    private readonly store: Store,
    /** Fetches an hour assumed of each placement until a full day of its traffic is known; 0: none. */
    private readonly priorPerHour = 0,
  ) {}

  /** The counters keys an even campaign's pace reads at `now`. */
  static counterKeys(campaign: Campaign, now: number): Array<{ campaignId: number; day: string }> {
    return [
      { campaignId: campaign.id, day: 'total' },
      { campaignId: campaign.id, day: localDate(now, campaign.timeZone) },
    ];
  }

  /** Its pace at `now`, from `counters` (read for it when not given). */
  async paceOf(campaign: Campaign, now: number, counters?: Counters): Promise<Pace> {
    for (const [key, plan] of this.plans) if (plan.to <= now) this.plans.delete(key);
    const read = counters ?? (await this.store.capCounters(PacingPlanner.counterKeys(campaign, now)));
    const caps = await this.pacedCaps(campaign, now, read);
    // The fetches its placements are expected to see in the next step, from the traffic learnt
    // (impressions an hour at this local hour; unknown with no history at all).
    const traffic = await this.trafficOf(campaign, now);
    const perHour = traffic.known
      ? (traffic.hourly[localHour(now, campaign.timeZone)] ?? 0)
      : this.priorPerHour * campaign.placements.length;
    // Without that, from its own draws since the last step: its impressions counter against the
    // chance it was drawn at (`domain/pacing.ts`, `chanceOf`).
    const impressions = read.get(`${campaign.id}:total`)?.impressions ?? 0;
    const last = this.lastPaces.get(campaign.id)?.chance ?? 0;
    const draws = recordDraws(this.draws.get(campaign.id) ?? NO_DRAWS, last, impressions);
    this.draws.set(campaign.id, draws);
    // And never fewer than its placements are seen to have now (their impressions in the last
    // minutes), which tells the fetches of a fresh placement, or of one busier than its history.
    const recent = await this.recentOf(campaign, now);
    const pace = paceOf(caps, now, PACING_STEP_MS, (perHour * PACING_STEP_MS) / HOUR, draws, recent);
    this.lastPaces.set(campaign.id, pace);
    return pace;
  }

  /** The fetches a step a campaign's placements have now at the least, read once a minute. */
  private async recentOf(campaign: Campaign, now: number): Promise<number> {
    const key = [...campaign.placements].sort().join(',');
    const { since, until } = recentWindow(now);
    const known = this.recent.get(key);
    if (known && known.until === until) return known.fetches;
    const minutes = await this.store.placementTraffic(campaign.placements, since, until, MINUTE);
    const fetches = recentFetches(minutes, now);
    this.recent.set(key, { until, fetches });
    return fetches;
  }

  /** Forgets the draws of campaigns no longer paced. */
  keepOnly(ids: ReadonlySet<number>): void {
    for (const id of this.draws.keys()) if (!ids.has(id)) this.draws.delete(id);
    for (const id of this.lastPaces.keys()) if (!ids.has(id)) this.lastPaces.delete(id);
  }

  /**
   * A campaign's caps and budgets with their plans for the period `now` falls in, and what they
   * delivered or spent. A budget is planned only at a price charged per event (`budgetCap`).
   */
  private async pacedCaps(campaign: Campaign, now: number, counters: Counters): Promise<PacedCap[]> {
    const { caps, budget, timeZone } = campaign;
    const periods = periodsAt(now, timeZone, campaign.startAt, campaign.endAt, campaign.createdAt);
    const none = { impressions: 0, clicks: 0, spendMicros: 0 };
    const today = counters.get(`${campaign.id}:${periods.day.key}`) ?? none;
    const total = counters.get(`${campaign.id}:total`) ?? none;
    const traffic = await this.trafficOf(campaign, now);
    const paced: PacedCap[] = [];
    const { schedule } = campaign;
    const planFor = (cap: number, period: { from: number; to: number }): PacingPlan => {
      // Its schedule is part of the key: a changed schedule plans anew.
      const key = `${campaign.id}:${cap}:${period.from}:${period.to}:${timeZone}:${JSON.stringify(schedule)}`;
      let plan = this.plans.get(key);
      if (!plan || plan.cap !== cap) {
        plan = planOf(cap, period.from, period.to, traffic.hourly, timeZone, schedule);
        this.plans.set(key, plan);
      }
      return plan;
    };
    const add = (cap: number | null, period: { from: number; to: number } | null, delivered: number) => {
      if (cap !== null && period !== null) paced.push({ plan: planFor(cap, period), delivered });
    };
    const addBudget = (amount: number | null, period: { from: number; to: number } | null, spent: number) => {
      if (amount === null || period === null) return;
      const cap = budgetCap(micros(amount), micros(spent), campaign.price, (whole) => planFor(whole, period));
      if (cap) paced.push(cap);
    };
    add(caps.impressionsDaily, periods.day, today.impressions);
    add(caps.clicksDaily, periods.day, today.clicks);
    add(caps.impressionsTotal, periods.flight, total.impressions);
    add(caps.clicksTotal, periods.flight, total.clicks);
    addBudget(budget.dailyMicros, periods.day, today.spendMicros);
    addBudget(budget.totalMicros, periods.flight, total.spendMicros);
    return paced;
  }

  /** The shape of the traffic of a campaign's placements by local hour, learnt at most an hour ago. */
  private async trafficOf(campaign: Campaign, now: number): Promise<LearntTraffic> {
    const key = `${[...campaign.placements].sort().join(',')}|${campaign.timeZone}`;
    const known = this.traffic.get(key);
    if (known && now - known.at < TRAFFIC_TTL_MS) return known;
    const since = now - TRAFFIC_HISTORY_MS;
    const slots = await this.store.placementTraffic(campaign.placements, since, now);
    const seen = slots.some((slot) => slot.impressions > 0 && slot.slot <= now - FULL_HISTORY_MS);
    const learnt = { hourly: learnTraffic(slots, since, now, campaign.timeZone), known: seen, at: now };
    this.traffic.set(key, learnt);
    // Plans built on the old shape are rebuilt on the new one.
    if (known) this.plans.clear();
    return learnt;
  }
}
