/**
 * Holds the responses produced while the event loop handles one round of ready connections and
 * writes them back to back when that round ends (`setImmediate` runs right after the poll phase).
 *
 * Why: each response write wakes the client that waits for it. On the virtual machines Placard
 * is measured on, waking a client whose core has gone idle costs the writer about as much as the
 * rest of a fetch together (an inter-processor interrupt through the hypervisor, with interrupts
 * off). Written one by one, between requests that each take tens of microseconds, nearly every
 * write found the load generator idle again and paid that cost; written together, only the first
 * of a round does. A response waits at most for the rest of its round, which is the work that was
 * already queued ahead of it on this one thread (docs/benchmarks.md, "Writing a round's responses
 * together").
 *
 * Responses produced outside the poll phase are the exception: a SQLite group commit runs in a
 * `setImmediate` callback, and the answers it releases would wait for the next round, which first
 * reads every request that arrived during the commit. `flushAfterMicrotasks` lets the committer
 * write them as soon as its requests' continuations have run (docs/benchmarks.md, the events run
 * of 2026-11-23 07:12 UTC, "A commit's answers go out at once").
 */
export class ResponseBatch<T> {
  private readonly queue: T[] = [];
  /** The end-of-round flush, while one is scheduled. */
  private immediate: NodeJS.Immediate | undefined;

  constructor(
    /** Writes one item's response; called in the order the items were added. */
    private readonly write: (item: T) => void,
    /** Told when `write` threw for an item; the items after it are still written. */
    private readonly onError: (item: T, error: unknown) => void,
  ) {}

  /** Queues an item to be written at the end of the current round. */
  add(item: T): void {
    this.queue.push(item);
    this.immediate ??= setImmediate(this.flush);
  }

  /**
   * Writes what is queued once the microtasks queued so far, and those they queue in turn, have
   * run, instead of at the end of the round. A `nextTick` queued from a microtask runs only after
   * the whole microtask queue has drained, so every `await` between a settled promise and the
   * `add` of its answer has happened by then. Called twice in a turn, the second flush finds
   * nothing left and writes nothing.
   */
  flushAfterMicrotasks(): void {
    queueMicrotask(() => process.nextTick(this.flush));
  }

  private readonly flush = (): void => {
    const queue = this.queue;
    // By index, re-reading the length: an item added while writing is written in this flush too.
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i] as T;
      try {
        this.write(item);
      } catch (error) {
        this.onError(item, error);
      }
    }
    queue.length = 0;
    // Cleared only now, so an item added while writing did not schedule a flush of its own.
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
  };
}
