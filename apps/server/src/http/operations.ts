import type { FastifyInstance } from 'fastify';
import { OPERATIONS_ROUTES } from './openapi/operations.js';
import type { AdminTokens } from '../services/admin-tokens.js';
import type { Metrics } from '../services/metrics.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Store } from '../store/store.js';
import type { Shutdown } from './app.js';

export interface OperationsDeps {
  store: Store;
  metrics: Metrics;
  shutdown: Shutdown;
  tokens: AdminTokens;
  limiter: RateLimiter;
}

/** A readiness check that takes longer than this counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * What an operator's tooling calls: `/healthz` (the process is alive), `/readyz` (it can serve:
 * store reachable, migrations applied, not shutting down; 503 naming the failing check otherwise;
 * `degraded` while the shared rate limiter's Redis is unreachable)
 * and `/metrics` (Prometheus text format, behind an admin token like the management API).
 */
export async function operationsRoutes(app: FastifyInstance, deps: OperationsDeps): Promise<void> {
  let migrationsApplied = false;

  app.get('/healthz', { schema: OPERATIONS_ROUTES.healthz }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: OPERATIONS_ROUTES.readyz }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    let failing: string | undefined;
    const check = async (name: string, run: () => Promise<string>): Promise<void> => {
      try {
        checks[name] = await withTimeout(run(), name);
      } catch (error) {
        checks[name] = error instanceof Error ? error.message : String(error);
        failing ??= name;
      }
    };
    await check('shutdown', async () => {
      if (deps.shutdown.closing) throw new Error('shutting down');
      return 'ok';
    });
    await check('store', async () => {
      await deps.store.ping();
      return 'ok';
    });
    await check('migrations', async () => {
      // Applied migrations stay applied: after the first success there is nothing to ask.
      if (!migrationsApplied) {
        const pending = await deps.store.pendingMigrations();
        if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`);
        migrationsApplied = true;
      }
      return 'ok';
    });
    // A lost Redis is reported, not failed: the instance still serves with its own limits (D7),
    // and failing readiness would take every instance out of the load balancer at once.
    const limits = deps.limiter.health();
    checks['rateLimits'] = limits.mode === 'shared' ? 'ok' : limits.detail;
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
    return { status: limits.mode === 'degraded' ? 'degraded' : 'ready', checks };
  });

  app.get('/metrics', { schema: OPERATIONS_ROUTES.metrics }, async (request, reply) => {
    await deps.tokens.authenticate(request.headers.authorization);
    const { contentType, body } = await deps.metrics.expose();
    return reply.type(contentType).send(body);
  });
}
