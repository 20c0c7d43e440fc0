import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import { Periodic } from './periodic.js';

const DAY = 24 * 60 * 60 * 1000;
/** Rows deleted per transaction, so pruning never holds the store's write lock for long. */
const CHUNK = 5_000;

/**
 * Keeps raw events for the configured number of days and forgets idempotency keys after their
 * 24 hours. Rollups are never pruned, so reports of any age stay exact. Runs at start and then
 * every few minutes on every instance; deletes are idempotent, so instances never conflict.
 */
export class RetentionJob {
  private readonly periodic: Periodic;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error' | 'info'>,
    private readonly retentionDays: number,
    private readonly clock: () => number = Date.now,
    intervalMs = 10 * 60_000,
  ) {
    this.periodic = new Periodic(
      () => this.runOnce(),
      intervalMs,
      (error) => this.log.error({ err: error }, 'pruning old events failed'),
    );
  }

  /** One pass; returns how many raw events and idempotency keys were deleted. */
  async runOnce(): Promise<{ events: number; idempotencyKeys: number }> {
    const now = this.clock();
    const before = now - this.retentionDays * DAY;
    let events = 0;
    for (;;) {
      const deleted = await this.store.pruneEvents(before, CHUNK);
      events += deleted;
      if (deleted < CHUNK) break;
      // Let requests through between chunks.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const idempotencyKeys = await this.store.pruneIdempotencyKeys(now);
    if (events > 0 || idempotencyKeys > 0) {
      this.log.info({ events, idempotencyKeys, retentionDays: this.retentionDays }, 'old events pruned');
    }
    return { events, idempotencyKeys };
  }

  start(): void {
    // Not at the very start: let the instance begin serving first.
    this.periodic.start(5_000);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
