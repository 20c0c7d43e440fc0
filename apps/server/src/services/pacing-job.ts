import type { Logger } from 'pino';
import type { Campaign } from '../domain/campaigns.js';
import {
  FLAT_TRAFFIC,
  PACING_STEP_MS,
  UNPACED,
  paceOf,
  periodsAt,
  planOf,
  type HourlyTraffic,
  type Pace,
  type PacedCap,
  type PacingPlan,
} from '../domain/pacing.js';
import { localDate, localHour } from '../domain/time-zones.js';
import type { Store } from '../store/store.js';
import { Periodic } from './periodic.js';
import type { ServingState } from './serving-state.js';

const HOUR = 3_600_000;
/** How far back the traffic of a campaign's placements is learnt from: a week, so weekdays average out. */
const TRAFFIC_HISTORY_MS = 7 * 24 * HOUR;
/** How long a learnt traffic shape is used before it is read again. */
const TRAFFIC_TTL_MS = HOUR;

interface LearntTraffic {
  hourly: HourlyTraffic;
  at: number;
}

type Counters = ReadonlyMap<string, { impressions: number; clicks: number }>;

/**
 * Plans each cap of an even campaign over its period (its local day, or its flight for a total
 * cap) in proportion to the traffic its placements had at each local hour over the last week, and
 * decides its pace from what it delivered (`domain/pacing.ts`). Learnt traffic shapes and plans are
 * kept between steps.
 */
export class PacingPlanner {
  private readonly traffic = new Map<string, LearntTraffic>();
  private readonly plans = new Map<string, PacingPlan>();

  constructor(private readonly store: Store) {}

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
    return paceOf(await this.pacedCaps(campaign, now, read), now);
  }

  /** A campaign's caps with their plans for the period `now` falls in, and what they delivered. */
  private async pacedCaps(campaign: Campaign, now: number, counters: Counters): Promise<PacedCap[]> {
    const { caps, timeZone } = campaign;
    const periods = periodsAt(now, timeZone, campaign.startAt, campaign.endAt, campaign.createdAt);
    const today = counters.get(`${campaign.id}:${periods.day.key}`) ?? { impressions: 0, clicks: 0 };
    const total = counters.get(`${campaign.id}:total`) ?? { impressions: 0, clicks: 0 };
    const traffic = await this.trafficOf(campaign, now);
    const paced: PacedCap[] = [];
    const add = (cap: number | null, period: { from: number; to: number } | null, delivered: number) => {
      if (cap === null || period === null) return;
      const key = `${campaign.id}:${cap}:${period.from}:${period.to}:${timeZone}`;
      let plan = this.plans.get(key);
      if (!plan || plan.cap !== cap) {
        plan = planOf(cap, period.from, period.to, traffic.hourly, timeZone);
        this.plans.set(key, plan);
      }
      paced.push({ plan, delivered });
    };
    add(caps.impressionsDaily, periods.day, today.impressions);
    add(caps.clicksDaily, periods.day, today.clicks);
    add(caps.impressionsTotal, periods.flight, total.impressions);
    add(caps.clicksTotal, periods.flight, total.clicks);
    return paced;
  }

  /** The shape of the traffic of a campaign's placements by local hour, learnt at most an hour ago. */
  private async trafficOf(campaign: Campaign, now: number): Promise<LearntTraffic> {
    const key = `${[...campaign.placements].sort().join(',')}|${campaign.timeZone}`;
    const known = this.traffic.get(key);
    if (known && now - known.at < TRAFFIC_TTL_MS) return known;
    const slots = await this.store.placementTraffic(campaign.placements, now - TRAFFIC_HISTORY_MS, now);
    const hourly = Array.from({ length: 24 }, () => 0);
    for (const { slot, impressions } of slots) {
      const hour = localHour(slot, campaign.timeZone);
      hourly[hour] = (hourly[hour] ?? 0) + impressions;
    }
    const learnt = { hourly: hourly.some((count) => count > 0) ? hourly : FLAT_TRAFFIC, at: now };
    this.traffic.set(key, learnt);
    // Plans built on the old shape are rebuilt on the new one.
    if (known) this.plans.clear();
    return learnt;
  }
}

/**
 * Even pacing (D16), on every instance: every `PACING_STEP_MS` it reads the running campaigns that
 * pace evenly and their cap counters (shared by every instance, so all decide alike), plans each cap
 * over its period (the campaign's local day, or its flight for a total cap) in proportion to the
 * traffic its placements had at each local hour over the last week, and holds back until the next
 * step every campaign at or ahead of where its plan will be then; one behind is served with draw
 * tickets for what it still needs (`domain/pacing.ts`). Only campaigns whose pace changed are
 * applied to the index, in place.
 */
export class PacingJob {
  private readonly periodic: Periodic;
  private readonly planner: PacingPlanner;
  private paced = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly state: ServingState,
    private readonly log: Pick<Logger, 'error'>,
    private readonly clock: () => number = Date.now,
    intervalMs = PACING_STEP_MS,
  ) {
    this.planner = new PacingPlanner(store);
    this.periodic = new Periodic(
      () => this.step(),
      intervalMs,
      (error) => this.log.error({ err: error }, 'pacing step failed'),
    );
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One step: decides every even campaign's pace and applies those that changed. */
  async step(): Promise<void> {
    const now = this.clock();
    const campaigns = await this.store.runningEvenCampaigns();
    const counters = await this.store.capCounters(
      campaigns.flatMap((campaign) => PacingPlanner.counterKeys(campaign, now)),
    );
    const changed = new Map<number, Pace>();
    for (const campaign of campaigns) {
      const pace = await this.planner.paceOf(campaign, now, counters);
      const current = this.state.paceOf(campaign.id);
      if (pace.held !== current.held || pace.weightFactor !== current.weightFactor)
        changed.set(campaign.id, pace);
    }
    // Campaigns paced at the last step that no longer are (paused, ended, made asap): unpaced.
    const pacedNow = new Set(campaigns.map((campaign) => campaign.id));
    for (const id of this.paced) if (!pacedNow.has(id)) changed.set(id, UNPACED);
    this.paced = pacedNow;
    if (changed.size === 0) return;
    const current = await this.store.getCampaigns([...changed.keys()]);
    this.state.pace(changed, current);
  }
}
