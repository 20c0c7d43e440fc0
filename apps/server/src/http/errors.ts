import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, WrongCredential, type ErrorKind, type FieldProblem } from '../domain/errors.js';
import { isUnavailableError } from '../store/errors.js';

/** An HTTP-only failure (wrong method, media type, size) raised inside `http/`. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The one mapping from domain failure kinds to HTTP status codes. */
const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unavailable: 503,
};

/** Fastify's own request errors, mapped to the product's messages (D5). */
const FRAMEWORK_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'request body too large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'request body must be a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'request body must be a JSON object' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'invalid Content-Length' },
  FST_ERR_BAD_URL: { status: 400, message: 'the path is not valid: a percent-encoded part is not UTF-8' },
};

export interface ErrorResponse {
  status: number;
  message: string;
  headers?: Record<string, string>;
  /** True for faults the operator must see in the log (500s, not client mistakes). */
  fault: boolean;
  /** The fields a client mistake concerns; only the management API's body lists them. */
  problems?: readonly FieldProblem[];
}

/**
 * Turns any thrown value into the response it deserves (D8). Client mistakes keep their message;
 * anything unexpected becomes a bare 500 whose details go only to the log.
 */
export function describeError(error: unknown): ErrorResponse {
  if (error instanceof DomainError) {
    const status = STATUS_BY_KIND[error.kind];
    if (error instanceof WrongCredential) {
      const challenge = `Bearer error="invalid_token", error_description="${error.hint}"`;
      return { status, message: error.message, headers: { 'www-authenticate': challenge }, fault: false };
    }
    // Nothing about why any other credential failed: an answer that differs helps probing for keys.
    if (status === 401)
      return { status, message: 'unauthorized', headers: { 'www-authenticate': 'Bearer' }, fault: false };
    if (status === 503)
      return { status, message: error.message, headers: { 'retry-after': '1' }, fault: false };
    return { status, message: error.message, fault: false, problems: error.problems };
  }
  if (error instanceof HttpError) {
    return { status: error.statusCode, message: error.message, headers: error.headers, fault: false };
  }
  // The store gone or overloaded: the request may succeed when retried (D8). Logged as a fault,
  // since the operator must see it.
  if (isUnavailableError(error))
    return { status: 503, message: 'service unavailable', headers: { 'retry-after': '1' }, fault: true };
  const fastifyError = error as Partial<FastifyError>;
  const known = fastifyError.code !== undefined ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) return { ...known, fault: false };
  // A JSON syntax error or prototype-poisoning attempt from Fastify's body parser.
  if (error instanceof SyntaxError || fastifyError.code?.startsWith('FST_ERR_CTP_')) {
    return { status: 400, message: 'request body must be a JSON object', fault: false };
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500)
    return { status, message: 'bad request', fault: false };
  return { status: 500, message: 'internal server error', fault: true };
}

/** The error body of the contract (section 7). */
export const errorBody = (message: string): string => JSON.stringify({ status: 'error', message });

/** Statuses whose management error body lists `problems`: the client's input was wrong. */
export const INPUT_STATUSES: ReadonlySet<number> = new Set([400, 422]);

/**
 * The management API's error body: the contract's, plus on 400 and 422 the `problems`, one per
 * field (an empty list when the mistake concerns no one field, such as a body that is not JSON).
 */
export function managementErrorBody({ status, message, problems }: ErrorResponse): string {
  if (!INPUT_STATUSES.has(status)) return errorBody(message);
  return JSON.stringify({ status: 'error', message, problems: problems ?? [] });
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers every error thrown in `app`'s routes through `describeError`, in the body `body` writes. */
export function installErrorHandler(
  app: FastifyInstance,
  body: (response: ErrorResponse) => string = (response) => errorBody(response.message),
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const response = describeError(error);
    if (response.fault) request.log.error({ err: error }, 'request failed');
    if (response.headers) reply.headers(response.headers);
    return reply.code(response.status).header('content-type', JSON_TYPE).send(body(response));
  });
}

/** The most characters a path id may have (Fastify's `maxParamLength`; every route's parameter is `id`). */
export const MAX_ID_LENGTH = 100;

/**
 * Fastify's `frameworkErrors`: a request refused before routing (a path whose percent-encoding is
 * not UTF-8, an id longer than `MAX_ID_LENGTH`) is answered in the error body of the API its path
 * belongs to, not in Fastify's own.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const response: ErrorResponse =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? {
          status: 400,
          message: `id must be at most ${MAX_ID_LENGTH} characters`,
          problems: [{ field: 'id', message: `must be at most ${MAX_ID_LENGTH} characters` }],
          fault: false,
        }
      : describeError(error);
  const body = request.url.startsWith('/admin/')
    ? managementErrorBody(response)
    : errorBody(response.message);
  void reply.code(response.status).header('content-type', JSON_TYPE).send(body);
}

/** Installs Fastify's error and not-found handlers over the same mapping (D8). */
export function installErrorHandling(app: FastifyInstance): void {
  installErrorHandler(app);
  app.setNotFoundHandler((_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).header('content-type', JSON_TYPE).send(errorBody('not found')),
  );
}
