import type http from 'node:http';
import { errorBody, JSON_TYPE } from './errors.js';
import { requestId } from './request-id.js';

/**
 * Requests Node would answer itself, with a bare status line and no body, before any handler sees
 * them. Answering them here gives them the documented error shape and an `X-Request-Id` like every
 * other answer (D8), and then closes the connection, as Node does.
 */
function answerBare(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  status: number,
  message: string,
) {
  const body = errorBody(message);
  response.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId(request.headers['x-request-id']),
    connection: 'close',
  });
  response.end(body);
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112 3.2); the server is created with Node's own check off
 * (`requireHostHeader: false`) so that this answers instead. True when it answered.
 */
export function refuseMissingHost(request: http.IncomingMessage, response: http.ServerResponse): boolean {
  if (request.headers.host !== undefined || request.httpVersion !== '1.1') return false;
  answerBare(request, response, 400, 'Host header is required');
  return true;
}

/** The server's `checkExpectation` listener: any `Expect` but `100-continue` is refused (RFC 9110 10.1.1). */
export function refuseExpectation(request: http.IncomingMessage, response: http.ServerResponse): void {
  answerBare(request, response, 417, 'only the expectation 100-continue is supported');
}
