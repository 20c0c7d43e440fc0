import type { Logger } from 'pino';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { EventWrites } from '../services/event-writes.js';
import { Periodic } from '../jobs/periodic.js';
import type { Store } from '../store/store.js';
import type { Shutdown } from './shutdown.js';

/** How often the store is checked in the background; readiness answers from the last check. */
export const READINESS_CHECK_INTERVAL_MS = 500;
/** A store check that takes longer than this counts as failed. */
export const CHECK_TIMEOUT_MS = 2_000;

/** A check that did not answer in time: its message names no address, so anyone may read it. */
class CheckTimeout extends Error {}

/** A failure whose message is safe to show anyone (it comes from this file, not a driver). */
class PublicReason extends Error {}

/** Events are not being stored; the detail is the store's own error, for admins and the log. */
class WritesFailing extends Error {}

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new CheckTimeout(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A failed check as anyone may see it. A driver's message can name internal hosts and ports
 * (`connect ECONNREFUSED 10.0.3.7:5432`), so readiness answers without an admin token give the
 * reason's class only; the full message is in the log and in answers to an admin token.
 */
function publicReason(error: Error): string {
  if (error instanceof CheckTimeout || error instanceof PublicReason) return error.message;
  if (error instanceof WritesFailing) return 'writes failing';
  return 'unavailable';
}

/** What readiness looks at. */
export interface ReadinessDeps {
  store: Store;
  writes?: EventWrites;
  shutdown: Shutdown;
  limiter: RateLimiter;
  logger: Logger;
  /** A monotonic clock in milliseconds, for the last check's age; tests move it. */
  now?: () => number;
}

/** Each check's answer (`ok` or why not), the first failing check, and the store check's age. */
export interface Readiness {
  /** `ready`, `degraded` (serving, with per-instance rate limits) or `not ready`. */
  status: 'ready' | 'degraded' | 'not ready';
  checks: Record<string, string>;
  failing?: string;
  /** Milliseconds since the last store check ended. */
  lastCheckAgeMs: number;
}

/** The outcome of the last background check of one kind. */
type Outcome = { ok: true } | { ok: false; error: Error };

/**
 * The instance's readiness, answered from state kept up to date in the background, never from a
 * round trip made for the question. A load balancer's check must be answered within its timeout
 * however busy the instance is: a store ping made per check waits behind every query already
 * queued, and on the last instance carrying all the traffic that made the balancer take it out.
 * So the store (reachable, migrations applied) is checked every `READINESS_CHECK_INTERVAL_MS`
 * by a background job, and a check still unanswered after `CHECK_TIMEOUT_MS` counts as failed;
 * what is known in memory (shutting down, event writes failing, where rate limits live) is read
 * as asked. Every answer carries how old the store check is.
 */
export class ReadinessMonitor {
  private store: Outcome = { ok: false, error: new PublicReason('not checked yet') };
  private migrations: Outcome = { ok: false, error: new PublicReason('not checked yet') };
  private checkedAt: number;
  private readonly periodic: Periodic;
  private readonly now: () => number;
  /** The last detail logged per check, so a check failing the same way is logged once. */
  private readonly logged = new Map<string, string>();

  constructor(private readonly deps: ReadinessDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.checkedAt = this.now();
    this.periodic = new Periodic(
      () => this.check(),
      READINESS_CHECK_INTERVAL_MS,
      // check() records its own failures; this is only for a bug in it.
      (error: unknown) => deps.logger.error({ err: error }, 'readiness check crashed'),
    );
  }

  /** Checks the store once and keeps the outcome. */
  async check(): Promise<void> {
    this.store = await this.outcome('store', async () => {
      await withTimeout(this.deps.store.ping(), 'store');
    });
    // Applied migrations stay applied: after the first success there is nothing to ask.
    if (!this.migrations.ok) {
      this.migrations = await this.outcome('migrations', async () => {
        const pending = await withTimeout(this.deps.store.pendingMigrations(), 'migrations');
        if (pending.length > 0) throw new PublicReason(`pending: ${pending.join(', ')}`);
      });
    }
    this.checkedAt = this.now();
  }

  /** Checks once, then keeps checking in the background until `stop`. */
  async start(): Promise<void> {
    await this.check();
    this.periodic.start(READINESS_CHECK_INTERVAL_MS);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /**
   * Readiness now, from memory. `detailed` answers give each failure's own message, for an admin
   * token or the operator's health page; others only the reason's class (see `publicReason`).
   */
  read(detailed: boolean): Readiness {
    const writesFailing = this.deps.writes?.failing();
    const outcomes: Record<string, Outcome> = {
      shutdown: this.deps.shutdown.closing
        ? { ok: false, error: new PublicReason('shutting down') }
        : { ok: true },
      // Reads can work while every write fails (a full disk): then the store is failing too.
      store:
        this.store.ok && writesFailing ? { ok: false, error: new WritesFailing(writesFailing) } : this.store,
      migrations: this.migrations,
    };
    const checks: Record<string, string> = {};
    let failing: string | undefined;
    for (const [name, outcome] of Object.entries(outcomes)) {
      if (outcome.ok) {
        checks[name] = 'ok';
        continue;
      }
      checks[name] = detailed ? outcome.error.message : publicReason(outcome.error);
      failing ??= name;
    }
    // A lost Redis is reported, not failed: the instance still serves with its own limits (D7),
    // and failing readiness would take every instance out of the load balancer at once. The
    // limiter logs the cause when it degrades.
    const limits = this.deps.limiter.health();
    checks['rateLimits'] =
      limits.mode === 'shared'
        ? 'ok'
        : detailed && limits.cause
          ? `${limits.detail} (${limits.cause})`
          : limits.detail;
    const lastCheckAgeMs = Math.max(0, Math.round(this.now() - this.checkedAt));
    if (failing !== undefined) return { status: 'not ready', checks, failing, lastCheckAgeMs };
    return { status: limits.mode === 'degraded' ? 'degraded' : 'ready', checks, lastCheckAgeMs };
  }

  /** Runs one check; a failure is logged when it starts or its detail changes, not every time. */
  private async outcome(name: string, run: () => Promise<void>): Promise<Outcome> {
    try {
      await run();
      this.logged.delete(name);
      return { ok: true };
    } catch (caught) {
      const error = caught instanceof Error ? caught : new Error(String(caught));
      if (this.logged.get(name) !== error.message) {
        this.logged.set(name, error.message);
        this.deps.logger.warn({ check: name, detail: error.message }, 'readiness check failing');
      }
      return { ok: false, error };
    }
  }
}
