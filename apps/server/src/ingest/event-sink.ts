import type { Verdict } from '../domain/verdicts.js';
import type { TrackedEvent } from '../store/store.js';

/**
 * Where tracked events go. `record` resolves only once the event is durably stored (D5, D9), with
 * the verdict it was stored with (`duplicate` for an idempotent replay, else the event's own).
 */
export interface EventSink {
  record(event: TrackedEvent): Promise<Verdict>;
  /** Events accepted and not yet stored, where the sink queues them (the operator's health page). */
  readonly depth?: number;
  /** Stops accepting events and waits for those in flight. */
  close(): Promise<void>;
}
