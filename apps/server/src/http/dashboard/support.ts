import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { DomainError, type FieldProblem } from '../../domain/errors.js';
import type { SignedIn } from '../../services/sessions.js';
import { describeError } from '../errors.js';
import { COOKIE_OPTIONS, FLASH_COOKIE } from './cookies.js';
import type { PageContext } from './pages/layout.js';
import { sendPage } from './render.js';

/** Every route of the dashboard is left out of the API document. */
export const PAGE = { schema: { hide: true } } as const;

/**
 * The CSRF token for this page's forms, who is signed in, and what was just done (shown once: the
 * page clears it).
 */
export function pageContext(request: FastifyRequest, reply: FastifyReply): PageContext {
  const flash = request.cookies[FLASH_COOKIE];
  if (flash) reply.clearCookie(FLASH_COOKIE, COOKIE_OPTIONS);
  return { csrf: reply.generateCsrf(), signedIn: request.signedIn, ...(flash && { flash }) };
}

/** The submitted form's fields as text (a repeated field keeps its last value). */
export function formFields(request: FastifyRequest): Record<string, string> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    const last: unknown = Array.isArray(value) ? value.at(-1) : value;
    if (typeof last === 'string') fields[name] = last;
  }
  return fields;
}

/** Only local paths, so a sign-in link cannot send people to another site afterwards. */
export const safeNext = (next: string | undefined): string =>
  next !== undefined && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';

/**
 * The signed-in person, or undefined after answering: a page asks the browser to sign in first
 * (and come back), a form post answers 401 with the sign-in page's message.
 */
export function requireSignedIn(request: FastifyRequest, reply: FastifyReply): SignedIn | undefined {
  if (request.signedIn) return request.signedIn;
  if (request.method === 'GET') {
    void reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
  } else {
    throw new DomainError('unauthorized', 'your session has ended; sign in again');
  }
  return undefined;
}

/**
 * Runs a change; when the service refuses it, renders `page` with the service's message, the
 * problems it found with each field, and the status it deserves instead, so a person reads what
 * went wrong beside the form they used. Returns whether it answered so.
 */
export async function attempt(
  reply: FastifyReply,
  change: () => Promise<void>,
  page: (problem: string, problems: readonly FieldProblem[]) => Promise<VNode>,
): Promise<boolean> {
  try {
    await change();
    return false;
  } catch (error) {
    if (!(error instanceof DomainError) || error.kind === 'unavailable') throw error;
    void sendPage(reply, await page(error.message, error.problems), describeError(error).status);
    return true;
  }
}
