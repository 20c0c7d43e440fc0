import type { Logger } from 'pino';
import { PACING_STEP_MS, UNPACED, samePace, type Pace } from '../domain/pacing.js';
import type { Store } from '../store/store.js';
import { PeriodicJob } from './periodic.js';
import type { ServingState } from '../serving/serving-state.js';
import { PacingPlanner } from './pacing-planner.js';

/**
 * Even pacing (D16), on every instance: every `PACING_STEP_MS` it reads the running campaigns that
 * pace evenly and their cap counters (shared by every instance, so all decide alike), plans each cap
 * over its period (the campaign's local day, or its flight for a total cap) in proportion to the
 * traffic its placements had at each local hour over the last week, and holds back until the next
 * step every campaign at or ahead of where its plan will be then; one behind is served with draw
 * tickets for what it still needs (`domain/pacing.ts`). Only campaigns whose pace changed are
 * applied to the index, in place.
 */
export class PacingJob extends PeriodicJob {
  private readonly planner: PacingPlanner;
  private paced = new Set<number>();

  constructor(
    private readonly store: Store,
    private readonly state: ServingState,
    log: Pick<Logger, 'error'>,
    private readonly clock: () => number = Date.now,
    intervalMs = PACING_STEP_MS,
    priorFetchesPerHour = 0,
  ) {
    super(intervalMs, log, 'pacing step failed');
    this.planner = new PacingPlanner(store, priorFetchesPerHour);
  }

  /** A pass is one pacing step. */
  runOnce(): Promise<void> {
    return this.step();
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
      if (!samePace(pace, current)) changed.set(campaign.id, pace);
    }
    // Campaigns paced at the last step that no longer are (paused, ended, made asap): unpaced.
    const pacedNow = new Set(campaigns.map((campaign) => campaign.id));
    for (const id of this.paced) if (!pacedNow.has(id)) changed.set(id, UNPACED);
    this.paced = pacedNow;
    this.planner.keepOnly(pacedNow);
    if (changed.size === 0) return;
    const current = await this.store.getCampaigns([...changed.keys()]);
    this.state.pace(changed, current);
  }
}
