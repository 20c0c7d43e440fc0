import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.js';

export const CROSS_SITE =
  'this form was sent from another site or without its origin; open the dashboard and try again';

/**
 * Refuses a state-changing request that a browser did not send from the dashboard itself (D13),
 * on top of the CSRF token: `Sec-Fetch-Site: same-origin` when the browser sends it, otherwise an
 * `Origin` equal to this server's or the public URL's. A request with neither is refused.
 */
export function refuseCrossSite(request: FastifyRequest, publicUrl: string): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site === 'same-origin') return;
    throw new DomainError('forbidden', CROSS_SITE);
  }
  const origin = request.headers.origin;
  const own = [`${request.protocol}://${request.host}`, new URL(publicUrl).origin];
  if (origin !== undefined && own.includes(origin)) return;
  throw new DomainError('forbidden', CROSS_SITE);
}
