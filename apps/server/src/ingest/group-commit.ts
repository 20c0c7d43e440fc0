import { performance } from 'node:perf_hooks';
import { DomainError } from '../domain/errors.js';
import { IDEMPOTENCY_KEY_REUSED_MESSAGE, type Verdict } from '../domain/verdicts.js';
import { isDataError, isLockedError } from '../store/errors.js';
import type { BatchOutcome, Store, TrackedEvent } from '../store/store.js';
import type { EventSink } from './event-sink.js';

export interface GroupCommitOptions {
  /** Most events in one transaction. */
  maxBatch: number;
  /** Most events waiting or committing; past it, new events are refused with 503 (D8). */
  maxQueue: number;
  /**
   * How long the first event of a batch waits for others to join it, in ms. 0 (the default)
   * waits only until the requests that arrived together have been read (`setImmediate`): a batch
   * is what came in during one turn of the event loop, or during the previous commit.
   */
  lingerMs: number;
  /** Most batches committing at once: the store's `traits.commitConcurrency` (`store/engine-traits.ts`). */
  concurrency: number;
  /**
   * How long a batch the store refused because another connection holds SQLite's write lock is
   * tried again, every few ms and without blocking, before its requests get 503. Short, so that a
   * lock held for seconds (a backup, an operator's long transaction) is answered promptly.
   */
  lockedRetryMs?: number;
}

export const DEFAULT_GROUP_COMMIT: GroupCommitOptions = {
  maxBatch: 500,
  maxQueue: 20_000,
  lingerMs: 0,
  concurrency: 1,
};

const DEFAULT_LOCKED_RETRY_MS = 250;

/** The pause between two tries of a locked batch. */
const LOCKED_RETRY_INTERVAL_MS = 10;

export interface BatchObserver {
  /** A transaction ended: its size, its duration and whether it failed. */
  committed?(size: number, seconds: number, failed: boolean): void;
  /** A batch was stored: events by `kind:verdict`. */
  stored?(counts: ReadonlyMap<string, number>): void;
  /**
   * Every request of a batch has just been told its outcome (stored or 503); their continuations
   * run as microtasks once this returns. Lets the HTTP layer write their answers at once.
   */
  settled?(): void;
}

interface Pending {
  event: TrackedEvent;
  resolve: (verdict: Verdict) => void;
  reject: (error: unknown) => void;
}

const unavailable = (): DomainError => new DomainError('unavailable', 'service unavailable');

/**
 * Group commit (D9): each tracked event joins the current batch; one transaction stores the batch
 * and only after it commits is every request in it answered. While a batch commits, the next one
 * fills, so a slow fsync makes batches bigger instead of requests slower. An event the store
 * refused because its Idempotency-Key stands for a different request gets 422. If the commit fails,
 * every request in the batch gets 503 and nothing of it is stored (the transaction is whole).
 */
export class GroupCommitSink implements EventSink {
  private queue: Pending[] = [];
  /** Events taken off the queue whose commit has not finished; they count against maxQueue. */
  private committing = 0;
  private timer: { cancel(): void } | undefined;
  /** Batches being committed. */
  private readonly active = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly store: Pick<Store, 'insertEvents'>,
    private readonly onError: (error: unknown) => void,
    /** Told when a write made a campaign reach a cap, so serving can stop it at once. */
    private readonly onCapReached: (effects: BatchOutcome) => void = () => undefined,
    private readonly options: GroupCommitOptions = DEFAULT_GROUP_COMMIT,
    /** Told of every commit attempt and of what each stored batch held (metrics). */
    private readonly observer: BatchObserver = {},
  ) {}

  /** Events accepted but not yet answered. */
  get depth(): number {
    return this.queue.length + this.committing;
  }

  record(event: TrackedEvent): Promise<Verdict> {
    if (this.closed || this.depth >= this.options.maxQueue) return Promise.reject(unavailable());
    return new Promise<Verdict>((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    // At the concurrency limit, a commit that finishes picks the queue up.
    if (this.active.size >= this.options.concurrency) return;
    if (this.queue.length >= this.options.maxBatch) {
      this.timer?.cancel();
      this.timer = undefined;
      this.startCommits();
    } else if (this.timer === undefined) {
      this.timer = this.later(() => {
        this.timer = undefined;
        this.startCommits();
      });
    }
  }

  private later(run: () => void): { cancel(): void } {
    if (this.options.lingerMs === 0) {
      const immediate = setImmediate(run);
      return { cancel: () => clearImmediate(immediate) };
    }
    const timeout = setTimeout(run, this.options.lingerMs);
    return { cancel: () => clearTimeout(timeout) };
  }

  /** Takes batches off the queue and commits them, up to the concurrency limit. */
  private startCommits(): void {
    while (this.active.size < this.options.concurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.committing += batch.length;
      const running: Promise<void> = this.commit(batch).finally(() => {
        this.committing -= batch.length;
        this.active.delete(running);
        // What queued up meanwhile is the next batch; it does not wait for a timer.
        this.startCommits();
      });
      this.active.add(running);
    }
  }

  /**
   * Stores a batch and answers it. When the store refuses the data itself (a constraint), the batch
   * is split in halves and retried, so one poisoned event costs only its own request a 503 instead
   * of failing every request that happened to share its transaction.
   */
  private async commit(batch: Pending[], firstTry = performance.now()): Promise<void> {
    const started = performance.now();
    try {
      const effects = await this.store.insertEvents(batch.map((pending) => pending.event));
      this.observer.committed?.(batch.length, (performance.now() - started) / 1000, false);
      const refused = new Set(effects.refused);
      const replayed = new Set(effects.replayed);
      const pastLimit = new Set([...effects.pastCap, ...effects.pastBudget]);
      for (const [index, pending] of batch.entries()) {
        if (refused.has(index))
          pending.reject(new DomainError('unprocessable', IDEMPOTENCY_KEY_REUSED_MESSAGE));
        else if (replayed.has(index)) pending.resolve('duplicate');
        else pending.resolve(pastLimit.has(index) ? 'invalid' : pending.event.verdict);
      }
      this.observer.settled?.();
      this.observer.stored?.(effects.stored);
      if (
        effects.completed.length > 0 ||
        effects.cappedForTheDay.length > 0 ||
        effects.advertisersHeld.length > 0
      )
        this.onCapReached(effects);
    } catch (error) {
      this.observer.committed?.(batch.length, (performance.now() - started) / 1000, true);
      if (
        isLockedError(error) &&
        performance.now() - firstTry < (this.options.lockedRetryMs ?? DEFAULT_LOCKED_RETRY_MS)
      ) {
        await new Promise((resolve) => setTimeout(resolve, LOCKED_RETRY_INTERVAL_MS));
        return this.commit(batch, firstTry);
      }
      if (batch.length > 1 && isDataError(error)) {
        const half = Math.ceil(batch.length / 2);
        await this.commit(batch.slice(0, half));
        await this.commit(batch.slice(half));
        return;
      }
      // Never a 200 for an event that was not stored (D8): the clients retry the 503.
      this.onError(error);
      for (const pending of batch) pending.reject(unavailable());
      this.observer.settled?.();
    }
  }

  /** Refuses new events, then commits everything already accepted. */
  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.startCommits();
    while (this.active.size > 0) await Promise.all(this.active);
  }
}
