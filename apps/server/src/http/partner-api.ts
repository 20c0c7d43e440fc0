import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { parseFetchQuery, parseTrackingBody } from '../domain/requests.js';
import type { Caller, DeliveryService } from '../serving/delivery.js';
import type { Metrics } from '../services/metrics.js';
import type { ServingState } from '../serving/serving-state.js';
import type { EventKind } from '../store/store.js';
import { AuthFailureLimiter, isGuess } from './auth-failures.js';
import { partnerAuthenticator } from './auth.js';
import { readJsonBody } from './body.js';
import { readFetchParams } from './query.js';
import { DomainError, invalid } from '../domain/errors.js';
import { rateLimitHeaders } from '../domain/rate-limits.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { IDEMPOTENCY_KEY_MESSAGE, isValidIdempotencyKey } from '../domain/verdicts.js';
import { describeError, errorBody, HttpError, JSON_TYPE } from './errors.js';
import type { RefusalLog } from './refusal-log.js';
import { PartnerExchange } from './partner-exchange.js';
import { requestId } from './request-id.js';
import { ResponseBatch } from './response-batch.js';

/** Paths and methods of the partner API (partner API section 4), also used to answer 405 (D8). */
export const PARTNER_ROUTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['/api/v1/campaigns/fetch', ['GET', 'HEAD']],
  ['/api/v1/campaigns/impression', ['POST']],
  ['/api/v1/campaigns/click', ['POST']],
]);

const TRACKING: Readonly<Record<string, EventKind>> = {
  '/api/v1/campaigns/impression': 'impression',
  '/api/v1/campaigns/click': 'click',
};

/** Tracking bodies are tiny; anything over 16 KiB is refused with 413 (D5). */
export const TRACKING_BODY_LIMIT = 16 * 1024;

const ACKNOWLEDGEMENTS: Readonly<Record<EventKind, string>> = {
  impression: JSON.stringify({ status: 'success', message: 'Impression tracked successfully' }),
  click: JSON.stringify({ status: 'success', message: 'Click tracked successfully' }),
};

export interface PartnerApiDeps {
  state: ServingState;
  delivery: DeliveryService;
  logger: Logger;
  accessLog: boolean;
  /** Seconds partners may reuse a fetch answer (`Cache-Control`); 0 sends `no-store`. */
  fetchMaxAgeSeconds: number;
  /** True once shutdown has begun: new partner requests get 503. */
  isClosing: () => boolean;
  /** Told of every authenticated use of a key. */
  onKeyUse?: (apiKeyId: number, at: number) => void;
  /** Told when a valid key came from a browser and was refused (partner API 1.5). */
  onBrowserUse?: (apiKeyId: number, at: number) => void;
  /**
   * Subscribes to the event batcher: told each time a batch's requests have been told their
   * outcome, so their answers are written at once instead of after the next round's reads.
   */
  onEventsSettled?: (listener: () => void) => void;
  /** The time source for key expiry; the same one the delivery service uses. */
  /** Failed authentications, shared with the other APIs; one of its own when not given. */
  authFailures?: AuthFailureLimiter;
  /** Counts and samples the log of uploads their clients abandon. */
  refusals?: RefusalLog;
  clock?: () => number;
  metrics: Metrics;
  /** Per key and operation class (D7); only authenticated requests reach it, so failed
   * authentication never spends a real key's quota (D6). */
  limiter: RateLimiter;
}

/** The request's connection was answered and ended before its body was read: it gets no answer. */
class ConnectionEnded extends Error {}

/** Handles a request if it is for the partner API; returns false to pass it on. */
export type PartnerHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/** The optional `Idempotency-Key` header (D9); a malformed one is refused rather than ignored. */
function idempotencyKeyOf(request: IncomingMessage): string | null {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return null;
  if (typeof value !== 'string' || !isValidIdempotencyKey(value)) throw invalid(IDEMPOTENCY_KEY_MESSAGE);
  return value;
}

/**
 * Browser signals (partner API 1.5: calls come from the partner's server, never from user-facing
 * code). Browsers send `Origin` on cross-origin and POST requests, and the Fetch Metadata headers
 * together: `Sec-Fetch-Mode` with `Sec-Fetch-Site` and `Sec-Fetch-Dest`. `Sec-Fetch-Mode: cors`
 * alone is not a browser: Node's own `fetch` (undici) sends exactly that from servers, and
 * refusing it would refuse every partner, and our SDK, that uses the platform fetch.
 */
function fromBrowser(request: IncomingMessage): boolean {
  const headers = request.headers;
  if (headers.origin !== undefined) return true;
  const mode = headers['sec-fetch-mode'];
  if (mode !== 'cors' && mode !== 'navigate' && mode !== 'no-cors') return false;
  return headers['sec-fetch-site'] !== undefined || headers['sec-fetch-dest'] !== undefined;
}

export const BROWSER_REFUSAL = 'api keys must only be used from a server';

/** Writes a complete JSON response; the one place partner responses are written. */
function send(
  response: ServerResponse,
  id: string,
  status: number,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  const head: Record<string, string | number> = {
    'content-type': JSON_TYPE,
    'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
    'x-request-id': id,
  };
  if (headers) Object.assign(head, headers);
  response.writeHead(status, head);
  response.end(body);
}

/**
 * The three partner operations served straight from `node:http`. They are the product's hot path:
 * measured on one core, Fastify's per-request lifecycle alone costs about half the throughput of a
 * plain handler (docs/benchmarks.md), so these routes skip it. Everything they share with the
 * Fastify routes (auth, error mapping, request ids, body rules) lives in functions both call.
 */
export function partnerApi(deps: PartnerApiDeps): PartnerHandler {
  const authenticate = partnerAuthenticator(deps.state, deps.onKeyUse, deps.clock);
  const failures = deps.authFailures ?? new AuthFailureLimiter();
  const clock = deps.clock ?? Date.now;
  // Contract 7: partners should cache fetched campaigns; this says for how long. Private: the
  // answer is per key, never for shared caches.
  const fetchHeaders = {
    'cache-control':
      deps.fetchMaxAgeSeconds > 0 ? `private, max-age=${deps.fetchMaxAgeSeconds}` : 'private, no-store',
  };
  // An answer with serve tokens is for one page view (D15): reusing it would replay its tokens.
  const perViewHeaders = { 'cache-control': 'private, no-store' };

  /** Authenticates; a failure is a 401 until its address has failed too often, then a 429 (D6). */
  function authenticateFrom(request: IncomingMessage): Caller {
    try {
      return authenticate(request.headers.authorization);
    } catch (error) {
      if (isGuess(error, request.headers.authorization)) {
        const retryAfter = failures.failFrom(request);
        if (retryAfter > 0) {
          deps.metrics.countRateLimited('auth');
          throw new HttpError(429, 'Rate limit exceeded', { 'retry-after': String(retryAfter) });
        }
      }
      throw error;
    }
  }

  /** Sends the error response a failure deserves; faults are logged, never shown. */
  function fail(exchange: PartnerExchange, error: unknown): void {
    const response = exchange.response;
    // Nothing can be written on a connection already answered and ended (see `track`).
    if (error instanceof ConnectionEnded) {
      response.destroy();
      return;
    }
    const { status, message, headers, fault, aborted } = describeError(error);
    if (fault) deps.logger.error({ err: error, reqId: exchange.id, route: exchange.path }, 'request failed');
    if (aborted) deps.refusals?.note('aborted_upload');
    if (response.headersSent) response.destroy();
    else respond(exchange, status, errorBody(message), headers);
  }

  /** Writes an answer, then records it: its duration includes the wait for its round to end. */
  function write({ request, response, id, path, started, status, body, headers }: PartnerExchange): void {
    // While shutting down, every answer ends its connection, so no request races an idle close.
    send(response, id, status, body, deps.isClosing() ? { ...headers, connection: 'close' } : headers);
    const ms = performance.now() - started;
    deps.metrics.observeRequest(path, request.method ?? '', status, ms / 1000);
    if (deps.accessLog) {
      deps.logger.info(
        { reqId: id, method: request.method, route: path, status, ms: Math.round(ms * 100) / 100 },
        'request',
      );
    }
  }

  const answers = new ResponseBatch<PartnerExchange>(write, (exchange, error) => {
    deps.logger.error({ err: error, reqId: exchange.id, route: exchange.path }, 'writing a response failed');
    exchange.response.destroy();
  });
  deps.onEventsSettled?.(() => answers.flushAfterMicrotasks());

  /** Answers a request: the exchange itself waits in the round's batch. */
  function respond(
    exchange: PartnerExchange,
    status: number,
    body: string | Buffer,
    headers?: Record<string, string>,
  ): void {
    exchange.answer(status, body, headers);
    answers.add(exchange);
  }

  async function track(request: IncomingMessage, kind: EventKind, caller: Caller): Promise<void> {
    const idempotencyKey = idempotencyKeyOf(request);
    const body = await readJsonBody(request, TRACKING_BODY_LIMIT);
    // A request answered already with an error that closed the connection, such as Node's 408 for
    // a request too slow to arrive (`answerClientError` in app.ts), can still have its body read:
    // the connection is only ended for writing. Its client was told it failed and may retry it, so
    // nothing of it is stored.
    if (!request.socket.writable) throw new ConnectionEnded();
    await deps.delivery.track(kind, parseTrackingBody(body), caller, idempotencyKey);
  }

  /** Serves a request the limiter has ruled on: 429 when it must wait, the operation otherwise. */
  function serve(exchange: PartnerExchange, caller: Caller, retryAfter: number): void {
    const kind = TRACKING[exchange.path];
    if (retryAfter > 0) {
      const operation = kind === undefined ? 'fetch' : 'events';
      deps.metrics.countRateLimited(operation);
      throw new HttpError(
        429,
        'Rate limit exceeded',
        rateLimitHeaders(operation, caller.policies[operation], retryAfter),
      );
    }
    if (kind === undefined) {
      const query = parseFetchQuery(readFetchParams(exchange.query));
      // An answer for a viewer (D20) is that viewer's, like one with tokens: never reused.
      const headers = query.tokens || query.viewer !== undefined ? perViewHeaders : fetchHeaders;
      const body = deps.delivery.fetch(query, caller);
      // Only a fetch naming a viewer with frequency caps in Redis waits (D20); the rest answer at once.
      if (!(body instanceof Promise)) respond(exchange, 200, body, headers);
      else
        body.then(
          (answer) => respond(exchange, 200, answer, headers),
          (error: unknown) => fail(exchange, error),
        );
    } else {
      track(exchange.request, kind, caller).then(
        () => respond(exchange, 200, ACKNOWLEDGEMENTS[kind]),
        (error: unknown) => fail(exchange, error),
      );
    }
  }

  return (request, response) => {
    const url = request.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const methods = PARTNER_ROUTES.get(path);
    if (methods === undefined) return false;

    const started = performance.now();
    const id = requestId(request.headers['x-request-id']);
    const exchange = new PartnerExchange(
      request,
      response,
      id,
      path,
      mark === -1 ? '' : url.slice(mark + 1),
      started,
    );
    try {
      if (!methods.includes(request.method ?? '')) {
        throw new HttpError(405, 'method not allowed', { allow: methods.join(', ') });
      }
      if (deps.isClosing()) {
        throw new HttpError(503, 'service unavailable', { 'retry-after': '1', connection: 'close' });
      }
      const caller = authenticateFrom(request);
      if (fromBrowser(request)) {
        // Only a valid key gets here, so only its holder learns why; the key has leaked.
        deps.onBrowserUse?.(caller.apiKeyId, clock());
        throw new DomainError('forbidden', BROWSER_REFUSAL);
      }
      const kind = TRACKING[path];
      const operation = kind === undefined ? 'fetch' : 'events';
      const decided = deps.limiter.take(operation, caller.apiKeyId, caller.policies[operation]);
      // The memory limiter answers at once: the default path allocates no closure and no promise.
      if (typeof decided === 'number') serve(exchange, caller, decided);
      else
        decided
          .then((retryAfter) => serve(exchange, caller, retryAfter))
          .catch((error: unknown) => fail(exchange, error));
    } catch (error) {
      fail(exchange, error);
    }
    return true;
  };
}
