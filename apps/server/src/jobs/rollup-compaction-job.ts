import type { Logger } from 'pino';
import { quarterOf } from '../store/event-ledger.js';
import type { Store } from '../store/store.js';
import { PeriodicJob } from './periodic.js';

/**
 * How long a quarter hour stays open after it ends: a batch commits within seconds of its events,
 * so one adding to a quarter hour already compacted is rare (it stays exact: it adds to both
 * tables itself).
 */
export const COMPACTION_GRACE_MS = 15 * 60_000;

/**
 * Sums the per-minute rollups of each quarter hour that has closed into `campaign_rollups`
 * (migration 013), which reports of weeks read instead of every minute's rows. One quarter hour per
 * transaction, letting requests through between two; runs shortly after start, then every few
 * minutes, on every instance: a quarter hour is summed once, by whichever gets to it first.
 */
export class RollupCompactionJob extends PeriodicJob {
  constructor(
    private readonly store: Store,
    log: Pick<Logger, 'error'>,
    private readonly clock: () => number = Date.now,
    intervalMs = 5 * 60_000,
  ) {
    super(intervalMs, log, 'summing closed quarter hours of rollups failed', 5_000);
  }

  /** One pass; returns how many transactions it took (each a quarter hour, or a stretch without rollups). */
  async runOnce(): Promise<number> {
    const until = quarterOf(this.clock() - COMPACTION_GRACE_MS);
    let steps = 0;
    // Stopped, a pass ends after its current quarter hour; the next one goes on.
    while (!this.stopping && (await this.store.compactRollups(until)) !== null) {
      steps++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return steps;
  }
}
