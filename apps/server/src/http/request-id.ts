import { randomUUID } from 'node:crypto';

/** A client-supplied request id is echoed only if it is short and plain; otherwise a new one is made. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id a request is known by in responses (`X-Request-Id`) and logs (D8). */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED.test(header) ? header : randomUUID();
}
