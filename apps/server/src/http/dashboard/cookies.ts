import type { FastifyReply } from 'fastify';
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
