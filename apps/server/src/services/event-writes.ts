import type { Logger } from 'pino';

/** How long a failed event write keeps readiness failing when no write has come since. */
export const WRITE_FAILURE_MEMORY_MS = 30_000;
/** At most one log line per this long while writes keep failing the same way. */
const LOG_INTERVAL_MS = 10_000;

/**
 * Whether events are being stored, for readiness and the log. A store can answer reads while every
 * write fails (a full disk, a read-only file system): readiness must then say the store is failing,
 * so a load balancer sends partners elsewhere, and the log must say why once, not once per batch.
 * It recovers by itself: the first write that succeeds clears the failure, and one that no write
 * has followed for 30 s is forgotten (an idle instance cannot prove the disk has room again).
 */
export class EventWrites {
  private failure: { since: number; at: number; error: string } | null = null;
  private lastLogged: { at: number; error: string } | null = null;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A batch could not be stored. */
  failed(error: unknown): void {
    const now = this.clock();
    const message = describe(error);
    this.failure = { since: this.failure?.since ?? now, at: now, error: message };
    const repeat = this.lastLogged?.error === message && now - this.lastLogged.at < LOG_INTERVAL_MS;
    if (repeat) {
      this.suppressed++;
      return;
    }
    const also = this.suppressed > 0 ? { alsoFailedTimes: this.suppressed } : {};
    this.logger.error({ err: error, ...also }, `storing events failed: ${message}`);
    this.lastLogged = { at: now, error: message };
    this.suppressed = 0;
  }

  /** A batch was stored. */
  stored(): void {
    if (this.failure === null) return;
    this.logger.info(
      { failingSince: new Date(this.failure.since).toISOString() },
      'storing events works again',
    );
    this.failure = null;
    this.lastLogged = null;
    this.suppressed = 0;
  }

  /** The reason writes are failing now, or null. */
  failing(): string | null {
    if (this.failure === null || this.clock() - this.failure.at > WRITE_FAILURE_MEMORY_MS) return null;
    return `writes failing since ${new Date(this.failure.since).toISOString()}: ${this.failure.error}`;
  }
}

/** The error's own message, with SQLite's or PostgreSQL's code when there is one. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}
