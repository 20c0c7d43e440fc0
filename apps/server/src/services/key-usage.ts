import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/**
 * "Last used" for API keys without a write per request: uses are noted in memory on the request
 * path and written in one pass every few seconds (and at shutdown).
 */
export class KeyUsage {
  private pending = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error'>,
    private readonly intervalMs = 5000,
  ) {}

  /** Notes a use; cheap enough for every request. */
  readonly touch = (apiKeyId: number, at: number): void => {
    this.pending.set(apiKeyId, at);
  };

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await this.store.recordKeyUsage(batch);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch((error: unknown) => this.log.error({ err: error }, 'recording key usage failed'));
    }, this.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
