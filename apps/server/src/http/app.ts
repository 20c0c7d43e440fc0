import http, { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { DeliveryService } from '../serving/delivery.js';
import type { Metrics } from '../services/metrics.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Store } from '../store/store.js';
import type { ServingState } from '../serving/serving-state.js';
import { adminApi, type AdminDeps } from './admin/plugin.js';
import { dashboard, type DashboardDeps } from './dashboard/plugin.js';
import { AuthFailureLimiter } from './auth-failures.js';
import type { ClientAddress } from './client-address.js';
import {
  answerFrameworkError,
  errorBody,
  errorBodyFor,
  installErrorHandling,
  JSON_TYPE,
  MAX_ID_LENGTH,
} from './errors.js';
import { installJsonParser } from './body.js';
import { ConnectionDrain } from './connection-drain.js';
import type { Shutdown } from './shutdown.js';
import { refuseExpectation, refuseMissingHost, refuseRepeatedHeaders } from './edge-requests.js';
import { apiDocs } from './openapi/document.js';
import { operationsRoutes, serviceHealth } from './operations.js';
import type { ReadinessMonitor } from './readiness.js';
import { partnerApi } from './partner-api.js';
import { installSecurityHeaders } from './security-headers.js';
import { RefusalLog } from './refusal-log.js';
import { requestId } from './request-id.js';

export interface AppDeps {
  logger: Logger;
  state: ServingState;
  delivery: DeliveryService;
  accessLog: boolean;
  /** Seconds partners may reuse a fetch answer. */
  fetchMaxAgeSeconds: number;
  admin: AdminDeps;
  /** The dashboard's own dependencies; its health page's are added here from the others. */
  dashboard: Omit<DashboardDeps, 'health'>;
  onKeyUse?: (apiKeyId: number, at: number) => void;
  onBrowserUse?: (apiKeyId: number, at: number) => void;
  /** Subscribes to the event batcher's settled batches (see `PartnerApiDeps`). */
  onEventsSettled?: (listener: () => void) => void;
  /**
   * How long a client has to send a whole request before it is answered `408` (default 30 s);
   * tests shorten it. Node checks for it every tenth of it, at most every 30 s.
   */
  requestTimeoutMs?: number;
  /** Set when shutdown begins; the server may set it before closing the listener (see server.ts). */
  shutdown: Shutdown;
  metrics: Metrics;
  /** For the operator's health page. */
  store: Store;
  /** The instance's readiness, checked in the background while the app is open. */
  readiness: ReadinessMonitor;
  limiter: RateLimiter;
  /** The client behind a request, through the trusted proxies: what per-client limits count. */
  clientAddress: ClientAddress;
  /** A clock that never steps back, for the limits' refills (`monotonicNow` in the product). */
  monotonic: () => number;
  /** The product's version, for the API document and the operator's health page. */
  version: string;
  /** Events accepted and not yet stored, for the operator's health page. */
  eventQueueDepth?: () => number;
}

/** Routes answered while draining, so that the instance can be seen draining. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * Requests Node's HTTP parser refuses before any handler sees them (malformed request lines or
 * headers, oversized headers, timeouts) still get the documented error body (D8), then the
 * connection closes.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler does: once a response has started on this connection, another one
  // cannot follow it, so the connection is just closed.
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request header fields too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request timeout']
        : [400, 'bad request'];
  const body = errorBody(message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Builds the HTTP application without listening; `server.ts` decides where it listens. One
 * `node:http` server: the partner API answers its three routes first (see `partner-api.ts`), and
 * everything else goes to Fastify.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { shutdown } = deps;
  // One limiter of failed authentications for every route that takes a credential (D6).
  const authFailures = new AuthFailureLimiter(undefined, deps.monotonic, undefined, deps.clientAddress);
  // One count of what clients may cause at will (abandoned uploads, stale forms), logged sparingly.
  const refusals = new RefusalLog(deps.logger, deps.metrics, deps.admin.clock);
  const partner = partnerApi({
    ...deps,
    clock: deps.admin.clock,
    isClosing: () => shutdown.closing,
    authFailures,
    refusals,
  });

  const app = Fastify({
    // pino's Logger is wider than Fastify's base logger type; the instance is the same one.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it sets the app's logger type parameter
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by our one access-log line (opt-in).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => requestId(request.headers['x-request-id']),
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    routerOptions: { maxParamLength: MAX_ID_LENGTH },
    serverFactory: (fastifyHandler) => {
      const requestTimeout = deps.requestTimeoutMs ?? 30_000;
      const server = http.createServer(
        {
          requireHostHeader: false,
          connectionsCheckingInterval: Math.min(30_000, Math.max(10, Math.floor(requestTimeout / 10))),
        },
        (request, response) => {
          if (refuseMissingHost(request, response) || refuseRepeatedHeaders(request, response)) return;
          if (!partner(request, response)) fastifyHandler(request, response);
        },
      );
      server.on('checkExpectation', refuseExpectation);
      shutdown.connections = new ConnectionDrain(server);
      // Partners keep connections open between calls; load balancers commonly idle out at 60 s.
      server.keepAliveTimeout = 72_000;
      // Node 20 lets a request run past a request timeout shorter than the headers timeout.
      server.headersTimeout = Math.min(20_000, requestTimeout);
      server.requestTimeout = requestTimeout;
      return server;
    },
  });

  app.addHook('preClose', async () => shutdown.begin());
  // While shutting down, every answer ends its connection, as the partner API's do.
  app.addHook('onSend', async (_request, reply) => {
    if (shutdown.closing) reply.header('connection', 'close');
  });
  // While draining, a request is refused with the 503 the partner API gives, so that its client
  // retries on another instance; the probes still answer, for the load balancer to see readiness
  // fail and the orchestrator to see the process alive.
  // Answered here rather than thrown: the dashboard's error handler would render its own page.
  app.addHook('onRequest', async (request, reply) => {
    if (shutdown.closing && !PROBES.has(request.routeOptions.url ?? '')) {
      return reply
        .code(503)
        .headers({ 'retry-after': '1', 'content-type': JSON_TYPE })
        .send(errorBodyFor(request.url, { status: 503, message: 'service unavailable', fault: false }));
    }
  });
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
  installErrorHandling(app, refusals);
  installSecurityHeaders(app);
  installJsonParser(app);
  // Route schemas document the API (see openapi/); the rules and their messages live in the
  // domain layer, shared with the CLI, so schemas neither validate nor reshape responses. (The
  // management API sets its own compiler, which parses path ids: admin/typed-routes.ts.)
  app.setValidatorCompiler(() => (value: unknown) => ({ value }));
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
  await app.register(apiDocs, { version: deps.version });
  // One readiness: /readyz and the operator's health page read the same, kept up to date in the
  // background from when the app is ready (before it listens) until it closes.
  const { readiness } = deps;
  app.addHook('onReady', () => readiness.start());
  app.addHook('onClose', () => readiness.stop());
  await app.register(operationsRoutes, {
    readiness,
    metrics: deps.metrics,
    tokens: deps.admin.tokens,
    authFailures,
  });
  await app.register(adminApi, { ...deps.admin, authFailures, refusals, prefix: '/admin/v1' });
  const health = serviceHealth({
    store: deps.store,
    state: deps.state,
    version: deps.version,
    ...(deps.eventQueueDepth && { eventQueueDepth: deps.eventQueueDepth }),
    readiness,
  });
  await app.register(dashboard, { ...deps.dashboard, health, refusals });
  return app;
}
