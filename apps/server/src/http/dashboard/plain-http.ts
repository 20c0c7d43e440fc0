import type { FastifyRequest } from 'fastify';

/**
 * What a person reads where the dashboard is opened over plain HTTP on an address other than the
 * machine's own: browsers keep its `Secure` cookies (the session, the CSRF secret) only on secure
 * connections, and count plain HTTP as secure on localhost alone, so every form there is refused.
 */
export const HTTPS_NEEDED =
  'The dashboard needs HTTPS at this address: browsers keep its sign-in and form cookies only over HTTPS (plain HTTP works on localhost alone), so every form sent from here is refused. Serve it over HTTPS, for example with TLS at the load balancer as docs/deployment.md shows under “TLS at HAProxy”, and set PLACARD_PUBLIC_URL to its https:// address.';

/** Host names browsers treat as secure over plain HTTP: the machine's own. */
const isLoopback = (host: string): boolean =>
  host === 'localhost' ||
  host.endsWith('.localhost') ||
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
  host === '[::1]' ||
  host === '::1';

/**
 * Whether the browser reached the dashboard over plain HTTP at an address that is not its own
 * machine's. A form's `Origin` says which scheme and host the browser used; a page has none, so the
 * scheme is the one a proxy in front says it received (`X-Forwarded-Proto`) or the connection's.
 * Only a notice depends on it: a wrong header hides or shows a hint, and changes nothing else.
 */
export function plainHttpElsewhere(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    try {
      const url = new URL(origin);
      return url.protocol === 'http:' && !isLoopback(url.hostname);
    } catch {
      return false;
    }
  }
  const forwarded = request.headers['x-forwarded-proto'];
  const scheme =
    (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() ?? request.protocol;
  return scheme === 'http' && !isLoopback(request.hostname);
}
