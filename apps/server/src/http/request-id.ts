import { randomBytes } from 'node:crypto';

/** A client-supplied request id is echoed only if it is short and plain; otherwise a new one is made. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Random per process, so ids from several instances do not collide; a counter makes each unique. */
const PROCESS_PREFIX = randomBytes(6).toString('hex');
let counter = 0;

/** The id a request is known by in responses (`X-Request-Id`) and logs (D8). */
export function requestId(header: string | string[] | undefined): string {
  if (typeof header === 'string' && WELL_FORMED.test(header)) return header;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PROCESS_PREFIX}-${counter.toString(36)}`;
}
