import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { OPERATIONS_ROUTES } from './openapi/operations.js';
import type { AdminTokens } from '../services/admin-tokens.js';
import type { Metrics } from '../services/metrics.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { EventWrites } from '../services/event-writes.js';
import type { ServingState } from '../services/serving-state.js';
import type { Store } from '../store/store.js';
import type { Shutdown } from './shutdown.js';
import { authenticateLimited, type AuthFailureLimiter } from './auth-failures.js';

export interface OperationsDeps {
  /** The instance's readiness checks (`readinessChecks`), shared with the dashboard's health page. */
  readiness: ReturnType<typeof readinessChecks>;
  metrics: Metrics;
  tokens: AdminTokens;
  /** Failed authentications, shared with the APIs: `/metrics` takes an admin token too. */
  authFailures: AuthFailureLimiter;
}

/** A readiness check that takes longer than this counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

/** A check that did not answer in time: its message names no address, so anyone may read it. */
class CheckTimeout extends Error {}

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
function publicReason(error: unknown): string {
  if (error instanceof CheckTimeout || error instanceof PublicReason) return error.message;
  if (error instanceof WritesFailing) return 'writes failing';
  return 'unavailable';
}

/** A failure whose message is safe to show anyone (it comes from this file, not a driver). */
class PublicReason extends Error {}

/** Events are not being stored; the detail is the store's own error, for admins and the log. */
class WritesFailing extends Error {}

/** What readiness looks at; one set of checks per instance, for `/readyz` and the dashboard. */
export interface ReadinessDeps {
  store: Store;
  writes?: EventWrites;
  shutdown: Shutdown;
  limiter: RateLimiter;
}

/** Each check's answer (`ok` or why not) and the first failing check, if any. */
export interface Readiness {
  /** `ready`, `degraded` (serving, with per-instance rate limits) or `not ready`. */
  status: 'ready' | 'degraded' | 'not ready';
  checks: Record<string, string>;
  failing?: string;
}

/**
 * The readiness checks (store reachable and storing events, migrations applied, not shutting
 * down, where rate limits live). `detailed` answers give each failure's own message, for an admin
 * token or the operator's health page; others only the reason's class (see `publicReason`).
 */
export function readinessChecks(
  deps: ReadinessDeps,
): (log: FastifyBaseLogger, detailed: boolean) => Promise<Readiness> {
  let migrationsApplied = false;
  /** The last detail logged per check, so a load balancer probing every second logs a change once. */
  const logged = new Map<string, string>();

  return async (log, detailed) => {
    const checks: Record<string, string> = {};
    let failing: string | undefined;
    const check = async (name: string, run: () => Promise<string>): Promise<void> => {
      try {
        checks[name] = await withTimeout(run(), name);
        logged.delete(name);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        if (logged.get(name) !== detail) {
          logged.set(name, detail);
          log.warn({ check: name, detail }, 'readiness check failing');
        }
        checks[name] = detailed ? detail : publicReason(error);
        failing ??= name;
      }
    };
    await check('shutdown', async () => {
      if (deps.shutdown.closing) throw new PublicReason('shutting down');
      return 'ok';
    });
    await check('store', async () => {
      await deps.store.ping();
      // Reads can work while every write fails (a full disk): then the store is failing too.
      const writesFailing = deps.writes?.failing();
      if (writesFailing) throw new WritesFailing(writesFailing);
      return 'ok';
    });
    await check('migrations', async () => {
      // Applied migrations stay applied: after the first success there is nothing to ask.
      if (!migrationsApplied) {
        const pending = await deps.store.pendingMigrations();
        if (pending.length > 0) throw new PublicReason(`pending: ${pending.join(', ')}`);
        migrationsApplied = true;
      }
      return 'ok';
    });
    // A lost Redis is reported, not failed: the instance still serves with its own limits (D7),
    // and failing readiness would take every instance out of the load balancer at once. The
    // limiter logs the cause when it degrades.
    const limits = deps.limiter.health();
    checks['rateLimits'] =
      limits.mode === 'shared'
        ? 'ok'
        : detailed && limits.cause
          ? `${limits.detail} (${limits.cause})`
          : limits.detail;
    if (failing !== undefined) return { status: 'not ready', checks, failing };
    return { status: limits.mode === 'degraded' ? 'degraded' : 'ready', checks };
  };
}

/**
 * What an operator's tooling calls: `/healthz` (the process is alive), `/readyz` (it can serve:
 * store reachable, migrations applied, not shutting down; 503 naming the failing check otherwise;
 * `degraded` while the shared rate limiter's Redis is unreachable)
 * and `/metrics` (Prometheus text format, behind an admin token like the management API).
 */
export async function operationsRoutes(app: FastifyInstance, deps: OperationsDeps): Promise<void> {
  app.get('/healthz', { schema: OPERATIONS_ROUTES.healthz }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: OPERATIONS_ROUTES.readyz }, async (request, reply) => {
    const detailed = await deps.tokens.authenticate(request.headers.authorization).then(
      () => true,
      () => false,
    );
    const { status, checks, failing } = await deps.readiness(request.log, detailed);
    if (failing !== undefined) {
      return reply
        .code(503)
        .header('retry-after', '1')
        .send({
          status: 'error',
          message: `not ready: ${failing} (${checks[failing]})`,
          checks,
        });
    }
    return { status, checks };
  });

  app.get('/metrics', { schema: OPERATIONS_ROUTES.metrics }, async (request, reply) => {
    await authenticateLimited(deps.tokens, deps.authFailures, request);
    const { contentType, body } = await deps.metrics.expose();
    return reply.type(contentType).send(body);
  });
}

/** What the operator's health page shows: readiness with its details, and figures cheap to read. */
export interface ServiceHealth {
  readiness: Readiness;
  version: string;
  uptimeSeconds: number;
  engine: string;
  /** The store's file or server and database, never its credentials. */
  storeLocation: string;
  /** Events accepted and not yet stored (group commit), when the sink queues them. */
  eventQueue: number | undefined;
  /** Running campaigns in the serving index, and how long ago it last checked the store. */
  indexCampaigns: number;
  indexRefreshAgeMs: number;
  memoryBytes: number;
}

export interface HealthDeps {
  store: Store;
  state: ServingState;
  version: string;
  eventQueueDepth?: () => number;
  readiness: ReturnType<typeof readinessChecks>;
}

/** This instance's health for the operator's dashboard: the same checks as `/readyz`, detailed. */
export function serviceHealth(deps: HealthDeps): (log: FastifyBaseLogger) => Promise<ServiceHealth> {
  return async (log) => ({
    readiness: await deps.readiness(log, true),
    version: deps.version,
    uptimeSeconds: process.uptime(),
    engine: deps.store.engine,
    storeLocation: deps.store.location,
    eventQueue: deps.eventQueueDepth?.(),
    indexCampaigns: deps.state.index.size,
    indexRefreshAgeMs: deps.state.refreshAgeMs,
    memoryBytes: process.memoryUsage.rss(),
  });
}
