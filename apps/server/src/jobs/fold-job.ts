import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import { PeriodicJob } from './periodic.js';

/** How often what batches appended is folded: a second's worth stays small to read. */
const FOLD_INTERVAL_MS = 1_000;

/**
 * SQLite: sums what tracking batches appended (rollup rows in `event_rollup_deltas`, migration 024,
 * with what they charged, migration 031) into the tables they add to, every second in one short
 * transaction, and once more when the instance stops, after its last batch, so a store left behind
 * by a clean stop has nothing to fold. Readers read both through the `_live` views, so a fold
 * changes no figure. PostgreSQL: nothing to fold, and the job does nothing.
 */
export class FoldJob extends PeriodicJob {
  constructor(
    private readonly store: Pick<Store, 'foldAppended'>,
    log: Pick<Logger, 'error'>,
    intervalMs = FOLD_INTERVAL_MS,
  ) {
    super(intervalMs, log, 'folding appended rollup rows and charges into their tables failed', intervalMs);
  }

  /** One fold; returns how many appended rows it summed. */
  runOnce(): Promise<number> {
    return this.store.foldAppended();
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.runOnce();
  }
}
