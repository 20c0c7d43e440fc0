import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/**
 * Sends a page rendered on the server. preact-render-to-string escapes every value it is given, so
 * names and messages from the store cannot become markup. Pages are never cached: they show live
 * figures and, once, secrets. A fragment (a part of a page that replaces itself) has no doctype.
 */
export function sendPage(
  reply: FastifyReply,
  page: VNode,
  status = 200,
  options: { fragment?: boolean } = {},
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`${options.fragment === true ? '' : '<!doctype html>'}${render(page)}`);
}
