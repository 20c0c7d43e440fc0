import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { DeliveryService } from '../services/delivery.js';
import type { ServingState } from '../services/serving-state.js';
import { installErrorHandling } from './errors.js';
import { deliveryRoutes, PARTNER_ROUTES } from './routes/delivery.js';

export interface AppDeps {
  logger: Logger;
  state: ServingState;
  delivery: DeliveryService;
  accessLog: boolean;
}

/** A client-supplied request id is echoed only if it is short and plain; otherwise a new one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the HTTP application without listening, so tests can drive it with `inject` and `main`
 * decides how it is served.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is wider than Fastify's base logger type; the instance is the same one.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by our one access-log line (opt-in).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    connectionTimeout: 30_000,
    keepAliveTimeout: 72_000,
    requestTimeout: 30_000,
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  if (deps.accessLog) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.info(
        {
          method: request.method,
          route: request.routeOptions.url ?? 'not-found',
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request',
      );
    });
  }

  installErrorHandling(app, PARTNER_ROUTES);
  await app.register(deliveryRoutes, { state: deps.state, delivery: deps.delivery });
  return app;
}
