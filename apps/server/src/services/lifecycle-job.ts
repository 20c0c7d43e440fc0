import type { Logger } from 'pino';
import { timedStatus } from '../domain/lifecycle.js';
import type { Store } from '../store/store.js';
import { audit, SYSTEM_ACTOR } from './audit.js';
import { campaignToJson } from './campaigns.js';

/**
 * The clock's part of the lifecycle (D11): scheduled campaigns start at their start time, live
 * ones complete at their end time. Every instance may run it; a move is made by whichever gets
 * there first (conditional update), and audited once, as `system`.
 */
export class LifecycleJob {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error' | 'info'>,
    private readonly intervalMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

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

  start(): void {
    const tick = (): void => {
      this.runOnce()
        .catch((error: unknown) =>
          this.log.error({ err: error }, 'applying campaign start and end times failed'),
        )
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
