import { DomainError } from '../domain/errors.js';
import type { CapEffects, Store, TrackedEvent } from '../store/store.js';

/** Where tracked events go. `record` resolves only once the event is durably stored (D5, D9). */
export interface EventSink {
  record(event: TrackedEvent): Promise<void>;
  /** Stops accepting events and waits for those in flight. */
  close(): Promise<void>;
}

/**
 * Writes each event in its own transaction before answering. Correct but one commit per event;
 * a group-commit batcher can replace it behind the same interface.
 */
export class DirectEventSink implements EventSink {
  private inFlight = new Set<Promise<CapEffects>>();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly onError: (error: unknown) => void,
    /** Told when a write made a campaign reach a cap, so serving can stop it at once. */
    private readonly onCapReached: (effects: CapEffects) => void = () => undefined,
  ) {}

  async record(event: TrackedEvent): Promise<void> {
    if (this.closed) throw new DomainError('unavailable', 'service unavailable');
    const write = this.store.insertEvents([event]);
    this.inFlight.add(write);
    try {
      const effects = await write;
      if (effects.completed.length > 0 || effects.cappedForTheDay.length > 0) this.onCapReached(effects);
    } catch (error) {
      // Never a 200 for an event that was not stored (D8): the client retries the 503.
      this.onError(error);
      throw new DomainError('unavailable', 'service unavailable');
    } finally {
      this.inFlight.delete(write);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
  }
}
