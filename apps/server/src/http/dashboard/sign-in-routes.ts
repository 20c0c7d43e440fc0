import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import { WRONG_SIGN_IN } from '../../services/sessions.js';
import { failureSource } from '../auth-failures.js';
import type { DashboardDeps } from './context.js';
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie } from './cookies.js';
import { SetPasswordPage, SignInPage } from './pages/sign-in.js';
import { plainHttpElsewhere } from './plain-http.js';
import { sendPage } from './render.js';
import { formFields, PAGE, pageContext, safeNext } from './support.js';

/** Sign-in, sign-out, and setting a password through a one-time link (D13). */
export async function signInRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get('/sign-in', PAGE, async (request, reply) => {
    const next = (request.query as Record<string, string | undefined>)['next'];
    if (request.signedIn) return reply.redirect(safeNext(next), 303);
    const page = pageContext(request, reply);
    const httpsNeeded = plainHttpElsewhere(request);
    return sendPage(reply, SignInPage({ page, httpsNeeded, ...(next && { next }) }));
  });

  app.post('/sign-in', PAGE, async (request, reply) => {
    const { email = '', password = '', next } = formFields(request);
    const result = await deps.sessions.signIn(
      email,
      password,
      failureSource(deps.clientAddress(request.raw)),
      request.headers['user-agent'] ?? null,
    );
    if (result.ok) {
      setSessionCookie(reply, result.secret);
      return reply.redirect(safeNext(next), 303);
    }
    // The same page and status for an unknown address and a wrong password (D13).
    const page = pageContext(request, reply);
    if (result.problem === 'throttled') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      const problem = `too many sign-in attempts; try again in ${result.retryAfterSeconds} seconds`;
      return sendPage(reply, SignInPage({ page, email, problem, ...(next && { next }) }), 429);
    }
    return sendPage(reply, SignInPage({ page, email, problem: WRONG_SIGN_IN, ...(next && { next }) }), 401);
  });

  app.post('/sign-out', PAGE, async (request, reply) => {
    await deps.sessions.signOut(request.cookies[SESSION_COOKIE]);
    clearSessionCookie(reply);
    return reply.redirect('/sign-in', 303);
  });

  app.get('/link/:secret', PAGE, async (request, reply) => {
    const { secret } = request.params as { secret: string };
    const { user, purpose } = await deps.sessions.describeLink(secret);
    const page = pageContext(request, reply);
    return sendPage(reply, SetPasswordPage({ page, email: user.email, purpose, action: `/link/${secret}` }));
  });

  app.post('/link/:secret', PAGE, async (request, reply) => {
    const { secret } = request.params as { secret: string };
    const { password } = formFields(request);
    try {
      const result = await deps.sessions.useLink(secret, password, request.headers['user-agent'] ?? null);
      setSessionCookie(reply, result.secret);
      return reply.redirect('/', 303);
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'invalid') throw error;
      const { user, purpose } = await deps.sessions.describeLink(secret);
      const page = pageContext(request, reply);
      const form = SetPasswordPage({
        page,
        email: user.email,
        purpose,
        action: `/link/${secret}`,
        problem: error.message,
        problems: error.problems,
      });
      return sendPage(reply, form, 400);
    }
  });
}
