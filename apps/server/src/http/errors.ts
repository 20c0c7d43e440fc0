import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DomainError,
  WrongCredential,
  type ErrorCode,
  type ErrorKind,
  type FieldProblem,
} from '../domain/errors.js';
import { isUnavailableError } from '../store/errors.js';
import type { RefusalLog } from './refusal-log.js';

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

/** The code of a management error body by its status, when the failure has no more specific one. */
const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'body_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'unavailable',
};

/** Another 4xx (an unsupported `Expect`, 417) is about the request's form; another 5xx a fault. */
const codeOfStatus = (status: number): ErrorCode =>
  CODE_BY_STATUS[status] ?? (status < 500 ? 'invalid_request' : 'internal_error');

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
  /** The management body's machine code, when more specific than its status's (`codeOfStatus`). */
  code?: ErrorCode;
  /** The fields a client mistake concerns; only the management API's body lists them. */
  problems?: readonly FieldProblem[];
  /** The client closed the connection before sending its whole body: no one reads the answer. */
  aborted?: boolean;
}

/** Node's error on a request whose connection closed before its body ended. */
const isAbortedUpload = (error: Partial<NodeJS.ErrnoException>): boolean =>
  error.code === 'ECONNRESET' && error.message === 'aborted';

/**
 * Turns any thrown value into the response it deserves (D8). Client mistakes keep their message;
 * anything unexpected becomes a bare 500 whose details go only to the log.
 */
export function describeError(error: unknown): ErrorResponse {
  if (error instanceof DomainError) {
    const status = STATUS_BY_KIND[error.kind];
    if (error instanceof WrongCredential) {
      const challenge = `Bearer error="invalid_token", error_description="${error.hint}"`;
      const headers = { 'www-authenticate': challenge };
      return { status, code: error.code, message: error.message, headers, fault: false };
    }
    // Nothing about why any other credential failed: an answer that differs helps probing for keys.
    if (status === 401)
      return { status, message: 'unauthorized', headers: { 'www-authenticate': 'Bearer' }, fault: false };
    if (status === 503)
      return {
        status,
        code: error.code,
        message: error.message,
        headers: { 'retry-after': '1' },
        fault: false,
      };
    return { status, code: error.code, message: error.message, fault: false, problems: error.problems };
  }
  if (error instanceof HttpError) {
    return { status: error.statusCode, message: error.message, headers: error.headers, fault: false };
  }
  // Before the store's errors: Node gives it the code of a connection reset.
  if (error instanceof Error && isAbortedUpload(error))
    return { status: 400, message: 'request aborted', fault: false, aborted: true };
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
 * The management API's error body: the contract's with a stable machine `code` (`ERROR_CODES` in
 * `domain/errors.ts`), plus on 400 and 422 the `problems`, one per field (an empty list when the
 * mistake concerns no one field, such as a body that is not JSON).
 */
export function managementErrorBody({ status, code, message, problems }: ErrorResponse): string {
  const body = { status: 'error', code: code ?? codeOfStatus(status), message };
  return JSON.stringify(INPUT_STATUSES.has(status) ? { ...body, problems: problems ?? [] } : body);
}

/** The error body for a request to `url`: the management API's under `/admin/`, the contract's elsewhere. */
export const errorBodyFor = (url: string | undefined, response: ErrorResponse): string =>
  url?.startsWith('/admin/') === true ? managementErrorBody(response) : errorBody(response.message);

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers every error thrown in `app`'s routes through `describeError`, in the body `body` writes;
 * faults are logged, aborted uploads counted in `refusals`.
 */
export function installErrorHandler(
  app: FastifyInstance,
  body: (response: ErrorResponse) => string = (response) => errorBody(response.message),
  refusals?: RefusalLog,
): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const response = describeError(error);
    if (response.fault) request.log.error({ err: error }, 'request failed');
    if (response.aborted) refusals?.note('aborted_upload');
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
  void reply
    .code(response.status)
    .header('content-type', JSON_TYPE)
    .send(errorBodyFor(request.url, response));
}

/** Installs Fastify's error and not-found handlers over the same mapping (D8). */
export function installErrorHandling(app: FastifyInstance, refusals?: RefusalLog): void {
  installErrorHandler(app, undefined, refusals);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(404)
      .header('content-type', JSON_TYPE)
      .send(errorBodyFor(request.url, { status: 404, message: 'not found', fault: false })),
  );
}
