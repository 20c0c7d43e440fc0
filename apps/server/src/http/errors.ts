import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorKind } from '../domain/errors.js';

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
};

export const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Bearer' };

/** Sends the one error shape of the contract (section 7): `{"status":"error","message":...}`. */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify({ status: 'error', message }));
}

function describe(error: unknown): { status: number; message: string; headers?: Record<string, string> } {
  if (error instanceof DomainError) {
    const status = STATUS_BY_KIND[error.kind];
    if (status === 401) return { status, message: 'unauthorized', headers: UNAUTHORIZED_HEADERS };
    if (status === 503) return { status, message: error.message, headers: { 'retry-after': '1' } };
    return { status, message: error.message };
  }
  if (error instanceof HttpError)
    return { status: error.statusCode, message: error.message, headers: error.headers };
  const fastifyError = error as Partial<FastifyError>;
  const known = fastifyError.code !== undefined ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) return known;
  // A JSON syntax error or prototype-poisoning attempt from the body parser.
  if (error instanceof SyntaxError || fastifyError.code?.startsWith('FST_ERR_CTP_')) {
    return { status: 400, message: 'request body must be a JSON object' };
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return { status, message: 'bad request' };
  return { status: 500, message: 'internal server error' };
}

/** Installs the error and not-found handlers: every failure leaves through here (D8). */
export function installErrorHandling(app: FastifyInstance, knownPaths: ReadonlyMap<string, string[]>): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message, headers } = describe(error);
    if (status >= 500 && status !== 503) request.log.error({ err: error }, 'request failed');
    else if (status === 503) request.log.warn({ err: error }, 'request refused: unavailable');
    if (headers) reply.headers(headers);
    return sendError(reply, status, message);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const methods = knownPaths.get(path);
    if (methods) {
      reply.header('allow', methods.join(', '));
      return sendError(reply, 405, 'method not allowed');
    }
    return sendError(reply, 404, 'not found');
  });
}
