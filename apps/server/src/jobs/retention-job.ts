import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import { PeriodicJob } from './periodic.js';

const DAY = 24 * 60 * 60 * 1000;

/** What one pass did: raw events and idempotency keys deleted, event partitions dropped and created. */
export interface RetentionPass {
  events: number;
  idempotencyKeys: number;
  dropped: string[];
  created: string[];
}
/**
 * Rows deleted per statement, so pruning never holds the store (and, on SQLite, the server's only
 * thread) for long. Idempotency keys are random, so each one deleted dirties a page of its own:
 * the chunk is small enough that a statement costs a few milliseconds on SQLite, where a chunk of
 * 5,000 keys cost 0.13 to 0.2 s (`npm run bench:retention`, docs/benchmarks.md).
 */
export const RETENTION_CHUNK = 250;

/**
 * How long a pass's partition changes on PostgreSQL wait for their lock on `events`: creating or
 * detaching a partition needs the table alone for an instant, and every insert queues behind the
 * wait, so behind a long reader (a backup) the pass gives up and tries again at the next one.
 */
export const PARTITION_LOCK_TIMEOUT_MS = 500;

/**
 * Keeps raw events for the configured number of days, forgets idempotency keys after their
 * 24 hours and trims the log of campaign changes. Rollups are never pruned, so reports of any age
 * stay exact. Runs at start and then every few minutes on every instance; deletes are idempotent,
 * and partition changes are made by one instance at a time, so instances never conflict.
 *
 * SQLite deletes expired events in chunks. PostgreSQL drops each day's partition once the whole
 * day has expired (events are kept at least the retention period, at most a day longer), deletes
 * in chunks only from the partition of events stored before partitioning, and creates the coming
 * week's partitions (store/event-partitions.ts).
 */
export class RetentionJob extends PeriodicJob {
  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error' | 'info'>,
    private readonly retentionDays: number,
    private readonly clock: () => number = Date.now,
    intervalMs = 10 * 60_000,
  ) {
    // Not at the very start: let the instance begin serving first.
    super(intervalMs, log, 'pruning old events failed', 5_000);
  }

  /**
   * One pass; returns how many raw events and idempotency keys were deleted, and the event
   * partitions dropped and created (PostgreSQL).
   */
  async runOnce(): Promise<RetentionPass> {
    const now = this.clock();
    const before = now - this.retentionDays * DAY;
    const dropped = await this.orNothing('dropping expired event partitions failed', () =>
      this.store.dropExpiredEventPartitions(before, PARTITION_LOCK_TIMEOUT_MS),
    );
    const events = await this.inChunks((limit) => this.store.pruneEvents(before, limit));
    const idempotencyKeys = await this.inChunks((limit) => this.store.pruneIdempotencyKeys(now, limit));
    // The log of campaign changes the serving indexes follow keeps only its newest versions.
    if (!this.stopping) await this.store.pruneCampaignChanges();
    const created = this.stopping
      ? []
      : await this.orNothing('creating event partitions failed', () =>
          this.store.ensureEventPartitions(now, this.retentionDays, PARTITION_LOCK_TIMEOUT_MS),
        );
    if (events > 0 || idempotencyKeys > 0 || dropped.length > 0) {
      this.log.info(
        { events, idempotencyKeys, partitions: dropped, retentionDays: this.retentionDays },
        'old events pruned',
      );
    }
    if (created.length > 0) this.log.info({ partitions: created }, 'event partitions created');
    return { events, idempotencyKeys, dropped, created };
  }

  /**
   * A partition change, logged and left to the next pass if it fails (its lock not granted in
   * time, behind a backup): the pass's deletes still run.
   */
  private async orNothing(failure: string, change: () => Promise<string[]>): Promise<string[]> {
    try {
      return await change();
    } catch (error) {
      this.log.error({ err: error }, failure);
      return [];
    }
  }

  /**
   * Runs a delete of at most RETENTION_CHUNK rows until one deletes fewer, or until the job is
   * stopped (a pass can take many seconds, and shutdown must not wait for it: it ends after its
   * current statement, and the next pass goes on); returns how many.
   */
  private async inChunks(prune: (limit: number) => Promise<number>): Promise<number> {
    let total = 0;
    while (!this.stopping) {
      const deleted = await prune(RETENTION_CHUNK);
      total += deleted;
      if (deleted < RETENTION_CHUNK) break;
      // Let requests through between chunks.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  }
}
