import type { Logger } from 'pino';
import type { Metrics, Refusal } from '../services/metrics.js';

/** What the log line of each refusal says. */
const LINES: Record<Refusal, string> = {
  aborted_upload: 'requests whose client closed the connection before sending the whole body',
  csrf: 'dashboard forms refused: their CSRF token was missing or wrong (an old tab, or another site)',
};

/**
 * Refusals any client can cause as often as it likes (an upload it abandons, a form without its CSRF
 * token): each is counted in `/metrics`, and the log gets at most one line per kind and interval,
 * saying how many there were since the previous line (`count`), so a flood cannot fill the log.
 * The first of a kind is logged at once.
 */
export class RefusalLog {
  private readonly kinds = new Map<Refusal, { loggedAt: number; count: number }>();

  constructor(
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly metrics: Pick<Metrics, 'countRefusal'>,
    private readonly clock: () => number = Date.now,
    private readonly intervalMs = 60_000,
  ) {}

  note(kind: Refusal): void {
    this.metrics.countRefusal(kind);
    const now = this.clock();
    let seen = this.kinds.get(kind);
    if (!seen) this.kinds.set(kind, (seen = { loggedAt: -Infinity, count: 0 }));
    seen.count++;
    if (now - seen.loggedAt < this.intervalMs) return;
    this.logger.warn({ refusal: kind, count: seen.count }, LINES[kind]);
    seen.loggedAt = now;
    seen.count = 0;
  }
}
