import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { describeError } from '../errors.js';
import { advertiserRoutes } from './advertiser-routes.js';
import { assetRoutes } from './assets.js';
import { campaignRoutes } from './campaign-routes.js';
import type { DashboardDeps } from './context.js';
import { COOKIE_OPTIONS, CSRF_COOKIE, SESSION_COOKIE } from './cookies.js';
import { flagRoutes } from './flag-routes.js';
import { keyRoutes } from './keys-routes.js';
import { operatorRoutes } from './operator-routes.js';
import { partnerRoutes } from './partner-routes.js';
import { placementRoutes } from './placement-routes.js';
import { ErrorPage } from './pages/layout.js';
import { sendPage } from './render.js';
import { reportRoutes } from './report-routes.js';
import { refuseCrossSite } from './same-origin.js';
import { signInRoutes } from './sign-in-routes.js';
import { PAGE, pageContext } from './support.js';
import { userRoutes } from './user-routes.js';

export type { DashboardDeps } from './context.js';

/** The answer to a form whose CSRF token is missing or wrong (an old tab, or another site's form). */
const STALE_FORM = 'this form has expired or did not come from the dashboard; reload the page and try again';

/** Where each kind of account starts. */
const HOME = { operator: '/review', advertiser: '/campaigns', partner: '/keys' } as const;

/**
 * The web dashboard (D14), served from `/` by the same process: pages rendered on the server,
 * forms that work without JavaScript, sessions from the store (see services/sessions.ts). Cookie,
 * form and CSRF plugins are registered here, so they apply to the dashboard only.
 */
export async function dashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
  await app.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: { ...COOKIE_OPTIONS, signed: false },
  });
  app.decorateRequest('signedIn', null);
  app.addHook('onRequest', async (request) => {
    request.signedIn = (await deps.sessions.authenticate(request.cookies[SESSION_COOKIE])) ?? null;
  });
  // Every change needs a same-origin browser request and the form's CSRF token (D13).
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD') return done();
    refuseCrossSite(request, deps.publicUrl);
    app.csrfProtection(request, reply, done);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const csrf = error.code?.startsWith('FST_CSRF_') === true;
    const response = csrf ? { status: 403, message: STALE_FORM, fault: false } : describeError(error);
    if (response.fault) request.log.error({ err: error }, 'dashboard request failed');
    const title = response.status >= 500 ? 'Something went wrong' : 'That did not work';
    const message = response.status === 401 ? 'your session has ended; sign in again' : response.message;
    return sendPage(reply, ErrorPage({ page: pageContext(request, reply), title, message }), response.status);
  });

  app.get('/', PAGE, async (request, reply) => {
    const signedIn = request.signedIn;
    return reply.redirect(signedIn ? HOME[signedIn.user.account.kind] : '/sign-in', 303);
  });
  await app.register(assetRoutes);
  await app.register(signInRoutes, deps);
  await app.register(keyRoutes, deps);
  await app.register(campaignRoutes, deps);
  await app.register(reportRoutes, deps);
  await app.register(userRoutes, deps);
  await app.register(partnerRoutes, deps);
  await app.register(advertiserRoutes, deps);
  await app.register(placementRoutes, deps);
  await app.register(operatorRoutes, deps);
  await app.register(flagRoutes, deps);
}
