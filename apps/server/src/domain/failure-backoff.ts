/**
 * Growing waits after consecutive failures: the first `free` failures of an id cost nothing, each
 * one after makes the id wait twice as long as the one before, from `firstWaitMs` up to `maxWaitMs`.
 * A success forgets the id, and so does `forgetAfterMs` without a failure. Pure state: the caller
 * owns the clock (a monotonic one in the product).
 */
export interface BackoffPolicy {
  free: number;
  firstWaitMs: number;
  maxWaitMs: number;
  forgetAfterMs: number;
}

interface Failures {
  count: number;
  lastAt: number;
  /** Until when the id must wait (0: it need not). */
  until: number;
}

export class FailureBackoff<Id = string> {
  private readonly ids = new Map<Id, Failures>();

  /** `maxEntries` bounds memory when ids come from outside: past it the least recently failed goes. */
  constructor(
    private readonly policy: BackoffPolicy,
    private readonly maxEntries = Infinity,
  ) {}

  /** Whole seconds `id` must still wait at `now` (0: it may try). */
  wait(id: Id, now: number): number {
    const failures = this.current(id, now);
    if (!failures || failures.until <= now) return 0;
    return Math.max(1, Math.ceil((failures.until - now) / 1000));
  }

  /** Records a failure of `id` at `now`. */
  fail(id: Id, now: number): void {
    const failures = this.current(id, now) ?? { count: 0, lastAt: now, until: 0 };
    failures.count++;
    failures.lastAt = now;
    const over = failures.count - this.policy.free;
    if (over >= 0) {
      failures.until = now + Math.min(this.policy.maxWaitMs, this.policy.firstWaitMs * 2 ** over);
    }
    // Re-inserted, so the map's order is the order of the last failure and its first entry the one to drop.
    this.ids.delete(id);
    if (this.ids.size >= this.maxEntries) this.ids.delete(this.ids.keys().next().value as Id);
    this.ids.set(id, failures);
  }

  /** Forgets `id`'s failures (after a success). */
  succeed(id: Id): void {
    this.ids.delete(id);
  }

  private current(id: Id, now: number): Failures | undefined {
    const failures = this.ids.get(id);
    // `now < lastAt` only if the caller's clock went back; then nothing has been forgotten yet.
    if (failures && now - failures.lastAt >= this.policy.forgetAfterMs) {
      this.ids.delete(id);
      return undefined;
    }
    return failures;
  }
}
