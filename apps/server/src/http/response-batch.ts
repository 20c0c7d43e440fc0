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
 */
export class ResponseBatch<T> {
  private readonly queue: T[] = [];
  private scheduled = false;

  constructor(
    /** Writes one item's response; called in the order the items were added. */
    private readonly write: (item: T) => void,
    /** Told when `write` threw for an item; the items after it are still written. */
    private readonly onError: (item: T, error: unknown) => void,
  ) {}

  /** Queues an item to be written at the end of the current round. */
  add(item: T): void {
    this.queue.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
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
    this.scheduled = false;
  };
}
