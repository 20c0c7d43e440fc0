import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_ABSOLUTE_MS } from '../../services/sessions.js';

/**
 * The session cookie (D13): `__Host-` (so only this origin, over a secure context, with path `/`,
 * can set it), HttpOnly, Secure, SameSite=Lax. Browsers count http://localhost and 127.0.0.1 as
 * secure, so the demo works over plain HTTP there.
 */
export const SESSION_COOKIE = '__Host-placard-session';
export const CSRF_COOKIE = '__Host-placard-csrf';
export const COOKIE_OPTIONS = { path: '/', httpOnly: true, secure: true, sameSite: 'lax' } as const;

export function setSessionCookie(reply: FastifyReply, secret: string): void {
  reply.setCookie(SESSION_COOKIE, secret, { ...COOKIE_OPTIONS, maxAge: SESSION_ABSOLUTE_MS / 1000 });
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, COOKIE_OPTIONS);
}

/**
 * What was just done ("Campaign “Spring sale” archived…"), for the page the browser is sent to next:
 * set with the redirect after a change, read and cleared by that page (`pageContext`). A minute is
 * long enough for the redirect and short enough that a tab opened later does not show it.
 */
export const FLASH_COOKIE = '__Host-placard-flash';

export function setFlash(reply: FastifyReply, message: string): void {
  reply.setCookie(FLASH_COOKIE, message, { ...COOKIE_OPTIONS, maxAge: 60 });
}

/**
 * A secret made by a form (a webhook endpoint's), carried across the redirect to the page that
 * shows it (POST, redirect, GET): that page reads and clears it, so reloading it neither makes
 * another nor shows this one again. It is the endpoint's alone, and lives a minute at most, like
 * the flash.
 */
const SHOWN_ONCE_COOKIE = '__Host-placard-shown-once';

export function keepToShowOnce(reply: FastifyReply, owner: string, secret: string): void {
  reply.setCookie(SHOWN_ONCE_COOKIE, `${owner} ${secret}`, {
    ...COOKIE_OPTIONS,
    sameSite: 'strict',
    maxAge: 60,
  });
}

/** The secret kept for `owner` (`webhook:7`), forgotten as it is read; undefined when none is. */
export function takeToShowOnce(
  request: FastifyRequest,
  reply: FastifyReply,
  owner: string,
): string | undefined {
  const kept = request.cookies[SHOWN_ONCE_COOKIE];
  if (kept === undefined) return undefined;
  void reply.clearCookie(SHOWN_ONCE_COOKIE, COOKIE_OPTIONS);
  const [keptOwner, secret] = kept.split(' ');
  return keptOwner === owner ? secret : undefined;
}
