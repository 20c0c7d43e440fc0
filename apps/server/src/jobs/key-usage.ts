import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/**
 * "Last used" for API keys without a write per request: uses are noted in memory on the request
 * path and written in one pass every few seconds (and at shutdown).
 */
export class KeyUsage {
  private pending = new Map<number, number>();
  private browser = new Map<number, { count: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error'> & Partial<Pick<Logger, 'warn'>>,
    private readonly intervalMs = 5000,
  ) {}

  /** Notes a use; cheap enough for every request. */
  readonly touch = (apiKeyId: number, at: number): void => {
    this.pending.set(apiKeyId, at);
  };

  /** Notes a request refused because the key came with browser signals (partner API 1.5). */
  readonly browserUse = (apiKeyId: number, at: number): void => {
    this.pending.set(apiKeyId, at);
    const seen = this.browser.get(apiKeyId);
    if (seen) {
      seen.count++;
      seen.at = at;
    } else {
      this.browser.set(apiKeyId, { count: 1, at });
      this.log.warn?.(
        { apiKeyId },
        'an API key was used from a browser and refused: it has leaked into client code; rotate it',
      );
    }
  };

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    const browser = this.browser;
    this.pending = new Map();
    this.browser = new Map();
    await this.store.recordKeyUsage(batch, browser);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch((error: unknown) => this.log.error({ err: error }, 'recording key usage failed'));
    }, this.intervalMs).unref();
  }

  /** Whether its timer is set: from `start` until `stop`. */
  get scheduled(): boolean {
    return this.timer !== undefined;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
