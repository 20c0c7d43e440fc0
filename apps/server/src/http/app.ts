import http from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { DeliveryService } from '../services/delivery.js';
import type { Metrics } from '../services/metrics.js';
import type { Store } from '../store/store.js';
import type { ServingState } from '../services/serving-state.js';
import { adminApi, type AdminDeps } from './admin/plugin.js';
import { installErrorHandling } from './errors.js';
import { operationsRoutes } from './operations.js';
import { partnerApi } from './partner-api.js';
import { requestId } from './request-id.js';

export interface AppDeps {
  logger: Logger;
  state: ServingState;
  delivery: DeliveryService;
  accessLog: boolean;
  admin: AdminDeps;
  onKeyUse?: (apiKeyId: number, at: number) => void;
  onBrowserUse?: (apiKeyId: number, at: number) => void;
  /** Set when shutdown begins; the server may set it before closing the listener (see server.ts). */
  shutdown: Shutdown;
  metrics: Metrics;
  /** For readiness checks. */
  store: Store;
}

/** Whether the instance is shutting down: new partner requests get 503 and connections close. */
export class Shutdown {
  closing = false;

  begin(): void {
    this.closing = true;
  }
}

/**
 * Builds the HTTP application without listening; `server.ts` decides where it listens. One
 * `node:http` server: the partner API answers its three routes first (see `partner-api.ts`), and
 * everything else goes to Fastify.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { shutdown } = deps;
  const partner = partnerApi({ ...deps, clock: deps.admin.clock, isClosing: () => shutdown.closing });

  const app = Fastify({
    // pino's Logger is wider than Fastify's base logger type; the instance is the same one.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by our one access-log line (opt-in).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => requestId(request.headers['x-request-id']),
    return503OnClosing: true,
    serverFactory: (fastifyHandler) => {
      const server = http.createServer((request, response) => {
        if (!partner(request, response)) fastifyHandler(request, response);
      });
      // Partners keep connections open between calls; load balancers commonly idle out at 60 s.
      server.keepAliveTimeout = 72_000;
      server.headersTimeout = 20_000;
      server.requestTimeout = 30_000;
      return server;
    },
  });

  app.addHook('preClose', async () => shutdown.begin());
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'not-found';
    deps.metrics.observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    if (deps.accessLog) {
      const ms = Math.round(reply.elapsedTime * 100) / 100;
      request.log.info({ method: request.method, route, status: reply.statusCode, ms }, 'request');
    }
  });
  installErrorHandling(app);
  await app.register(operationsRoutes, {
    store: deps.store,
    metrics: deps.metrics,
    shutdown,
    tokens: deps.admin.tokens,
  });
  await app.register(adminApi, { ...deps.admin, prefix: '/admin/v1' });
  return app;
}
