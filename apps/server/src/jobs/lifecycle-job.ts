import type { Logger } from 'pino';
import { timedStatus } from '../domain/lifecycle.js';
import type { Store } from '../store/store.js';
import { audit, SYSTEM_ACTOR } from '../services/audit.js';
import { campaignToJson } from '../services/campaigns.js';
import { PeriodicJob } from './periodic.js';

/**
 * The clock's part of the lifecycle (D11): scheduled campaigns start at their start time, live
 * ones complete at their end time. Every instance may run it; a move is made by whichever gets
 * there first (conditional update), and audited once, as `system`.
 */
export class LifecycleJob extends PeriodicJob {
  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error' | 'info'>,
    intervalMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    super(intervalMs, log, 'applying campaign start and end times failed');
  }

  /** One pass; returns how many campaigns this call moved. */
  async runOnce(): Promise<number> {
    const now = this.clock();
    let moved = 0;
    for (const campaign of await this.store.campaignsDueForTimedStatus(now)) {
      const next = timedStatus(campaign, now);
      if (next === null) continue;
      await this.store.transaction(async (tx) => {
        if (!(await tx.moveCampaignStatus(campaign.id, campaign.status, next, now))) return;
        moved++;
        const reason = next === 'completed' ? 'end time passed' : 'start time reached';
        const after = campaignToJson({ ...campaign, status: next });
        await audit(
          tx,
          SYSTEM_ACTOR,
          {
            objectType: 'campaign',
            objectId: campaign.id,
            action: next === 'completed' ? 'complete' : 'start',
            reason,
            before: campaignToJson(campaign),
            after,
          },
          now,
        );
      });
    }
    if (moved > 0) this.log.info({ moved }, 'campaign start and end times applied');
    return moved;
  }
}
