import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { OPERATIONS_ROUTES } from './openapi/operations.js';
import type { AdminTokens } from '../services/admin-tokens.js';
import type { Metrics } from '../services/metrics.js';
import type { ServingState } from '../serving/serving-state.js';
import type { Store } from '../store/store.js';
import { requireOperatorAccount } from '../services/scope.js';
import type { Readiness, ReadinessMonitor } from './readiness.js';
import { authenticateLimited, type AuthFailureLimiter } from './auth-failures.js';

export interface OperationsDeps {
  /** The instance's readiness, shared with the dashboard's health page. */
  readiness: ReadinessMonitor;
  metrics: Metrics;
  tokens: AdminTokens;
  /** Failed authentications, shared with the APIs: `/metrics` takes an admin token too. */
  authFailures: AuthFailureLimiter;
}

/**
 * What an operator's tooling calls: `/healthz` (the process is alive), `/readyz` (it can serve:
 * store reachable, migrations applied, not shutting down; 503 naming the failing check otherwise;
 * `degraded` while the shared rate limiter's Redis is unreachable)
 * and `/metrics` (Prometheus text format, behind an operator's admin token like the audit log).
 */
export async function operationsRoutes(app: FastifyInstance, deps: OperationsDeps): Promise<void> {
  app.get('/healthz', { schema: OPERATIONS_ROUTES.healthz }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: OPERATIONS_ROUTES.readyz }, async (request, reply) => {
    const detailed = await deps.tokens.authenticate(request.headers.authorization).then(
      () => true,
      () => false,
    );
    const { status, checks, failing, lastCheckAgeMs } = deps.readiness.read(detailed);
    if (failing !== undefined) {
      return reply
        .code(503)
        .header('retry-after', '1')
        .send({
          status: 'error',
          message: `not ready: ${failing} (${checks[failing]})`,
          checks,
          lastCheckAgeMs,
        });
    }
    return { status, checks, lastCheckAgeMs };
  });

  app.get('/metrics', { schema: OPERATIONS_ROUTES.metrics }, async (request, reply) => {
    // Deployment-wide counters (every advertiser's and partner's traffic): the operator's, as the
    // audit log is; a token scoped to one account gets the same refusal.
    requireOperatorAccount(
      await authenticateLimited(deps.tokens, deps.authFailures, request),
      'read the metrics',
    );
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
  readiness: ReadinessMonitor;
}

/** This instance's health for the operator's dashboard: the same checks as `/readyz`, detailed. */
export function serviceHealth(deps: HealthDeps): (log: FastifyBaseLogger) => Promise<ServiceHealth> {
  return async () => ({
    readiness: deps.readiness.read(true),
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
