import {
  AuthenticationError,
  ForbiddenError,
  KeySuspendedError,
  NotFoundError,
  PlacardError,
  RateLimitedError,
  ServerError,
  ValidationError,
} from './errors.js';
import { codeOfAnswer } from './codes.js';
import { isErrorBody } from './response.js';
import { backoffMs, parseRetryAfter, type RetryPolicy } from './retry.js';

/** What the transport needs from its surroundings; tests pass a controllable clock and sleep. */
export interface TransportOptions {
  /** Placard's address, its path ending in `/`: request paths are resolved under it. */
  baseUrl: string;
  apiKey: string;
  fetch: typeof globalThis.fetch;
  retry: RetryPolicy;
  /** Per attempt. */
  timeoutMs: number;
  clock: () => number;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  userAgent: string;
}

export interface Call {
  method: 'GET' | 'POST';
  /** The contract's path, e.g. `/api/v1/campaigns/fetch?…`, relative to `baseUrl`'s path. */
  path: string;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Whether a successful body has the contract's shape; anything else is a ServerError. */
  accept: (body: unknown) => boolean;
}

export interface Answer {
  body: unknown;
  headers: Headers;
}

/** A failure worth another attempt (429, 5xx, network, timeout), with the server's wait if any. */
class Retryable extends Error {
  constructor(
    readonly failure: PlacardError,
    readonly retryAfterMs: number | null,
  ) {
    super(failure.message);
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The error a non-2xx answer stands for, by its code (`codes.ts`: by status, and by the contract's
 * message where one status covers several cases); thrown as is, or wrapped in Retryable when worth
 * a retry.
 */
function failureOf(status: number, body: unknown, retryAfterMs: number | null): PlacardError | Retryable {
  const message = isErrorBody(body) ? body.message : undefined;
  const code = codeOfAnswer(status, message);
  const text = message ?? `HTTP ${status}`;
  switch (code) {
    case 'unauthorized':
      return new AuthenticationError(text, status);
    case 'key_suspended':
      return new KeySuspendedError(text, status);
    case 'sent_from_browser':
    case 'forbidden':
      return new ForbiddenError(text, status, code);
    case 'invalid_request':
      return new ValidationError(text, status);
    case 'not_found':
      return new NotFoundError(text, status);
    case 'rate_limited':
      return new Retryable(new RateLimitedError(text, retryAfterMs ?? 1000), retryAfterMs);
    case 'server_error':
      return new Retryable(new ServerError(text, status, { code }), retryAfterMs);
    default:
      return new PlacardError(text, status, { code });
  }
}

/**
 * One logical call: attempts with a timeout each, retrying 429, 5xx, network errors and timeouts
 * with exponential backoff and full jitter (never sooner than `Retry-After`), bounded in attempts
 * and total time. 401, 403, 400 and 404 are thrown at once: retrying cannot fix them. The caller's
 * `signal` aborts everything, waits included.
 */
export async function call(options: TransportOptions, request: Call): Promise<Answer> {
  const started = options.clock();
  for (let attempt = 1; ; attempt++) {
    request.signal?.throwIfAborted();
    let outcome: Answer | PlacardError | Retryable;
    try {
      outcome = await attemptOnce(options, request);
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      const reason = timedOut ? `no answer within ${options.timeoutMs} ms` : 'network error';
      const code = timedOut ? 'timeout' : 'network_error';
      outcome = new Retryable(
        new ServerError(`${reason}: ${request.method} ${request.path}`, null, { cause: error, code }),
        null,
      );
    }
    if (!(outcome instanceof Error)) return outcome;
    if (!(outcome instanceof Retryable)) throw outcome;
    const wait = backoffMs(options.retry, attempt, options.random, outcome.retryAfterMs);
    const elapsed = options.clock() - started;
    if (attempt >= options.retry.maxAttempts || elapsed + wait > options.retry.maxElapsedMs)
      throw outcome.failure;
    await options.sleep(wait, request.signal);
  }
}

async function attemptOnce(
  options: TransportOptions,
  request: Call,
): Promise<Answer | PlacardError | Retryable> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent,
  };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
  const response = await options.fetch(new URL(`.${request.path}`, options.baseUrl), {
    method: request.method,
    headers,
    ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
    signal,
  });
  const body = await readJson(response);
  if (response.ok) {
    if (!request.accept(body)) {
      return new ServerError(`malformed response to ${request.method} ${request.path}`, response.status, {
        code: 'malformed_response',
      });
    }
    return { body, headers: response.headers };
  }
  return failureOf(
    response.status,
    body,
    parseRetryAfter(response.headers.get('retry-after'), options.clock()),
  );
}
