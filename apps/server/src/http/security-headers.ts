import type { FastifyInstance } from 'fastify';

/** Headers every HTML page gets: no framing, no sniffing, no referrer, its own origin only. */
const HTML_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), interest-cohort=()',
};

/** A page's own scripts and styles only; nothing may frame it. */
export const HTML_CSP =
  "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self'";

/**
 * Adds the HTML security headers (and a strict Content-Security-Policy where the page did not set
 * its own) to every HTML response Fastify sends; JSON and other responses get `nosniff` only. The
 * partner API never serves HTML and is not touched.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) {
      reply.headers(HTML_HEADERS);
      if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', HTML_CSP);
    } else {
      reply.header('x-content-type-options', 'nosniff');
    }
    return payload;
  });
}
