import type { TrackedEvent } from '../store/store.js';

/** Where tracked events go. `record` resolves only once the event is durably stored (D5, D9). */
export interface EventSink {
  record(event: TrackedEvent): Promise<void>;
  /** Events accepted and not yet stored, where the sink queues them (the operator's health page). */
  readonly depth?: number;
  /** Stops accepting events and waits for those in flight. */
  close(): Promise<void>;
}
