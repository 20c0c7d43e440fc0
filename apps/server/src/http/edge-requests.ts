import type http from 'node:http';
import { errorBodyFor, JSON_TYPE } from './errors.js';
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
  // The management API's body carries its code, and on a 400 its problems, here none (D8).
  const body = errorBodyFor(request.url, { status, message, fault: false });
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

/**
 * Refuses a request with two `Host` or two `Authorization` headers (400). Node keeps the first of
 * each and drops the rest, so a second `Authorization` would go unseen while a proxy in front may
 * have read the other one, and two `Host` headers are a request smuggling signal (RFC 9112 3.2).
 * The check reads `rawHeaders`, where every header keeps its own entry, and compares a name's
 * letters only when its length is one of the two, so a usual request costs a few length
 * comparisons. True when it answered.
 */
export function refuseRepeatedHeaders(request: http.IncomingMessage, response: http.ServerResponse): boolean {
  const raw = request.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // The usual spellings compare without lower-casing (which makes a new string).
    if (name.length === 4) {
      if (name === 'Host' || name === 'host' || name.toLowerCase() === 'host') hosts++;
    } else if (name.length === 13) {
      if (name === 'Authorization' || name === 'authorization' || name.toLowerCase() === 'authorization')
        authorizations++;
    }
  }
  if (hosts < 2 && authorizations < 2) return false;
  const message =
    hosts > 1 ? 'the Host header must be sent once' : 'the Authorization header must be sent once';
  answerBare(request, response, 400, message);
  return true;
}
