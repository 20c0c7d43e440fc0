import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { describeError, type ErrorResponse } from '../errors.js';
import { refuseNulCharacters } from '../nul-characters.js';
import { advertiserRoutes } from './advertiser-routes.js';
import { assetRoutes } from './assets.js';
import { campaignRoutes } from './campaign-routes.js';
import { confirmRoutes } from './confirm-routes.js';
import type { DashboardDeps } from './context.js';
import { COOKIE_OPTIONS, CSRF_COOKIE, SESSION_COOKIE } from './cookies.js';
import { flagRoutes } from './flag-routes.js';
import { keyRoutes } from './keys-routes.js';
import { operatorRoutes } from './operator-routes.js';
import { partnerRoutes } from './partner-routes.js';
import { placementRoutes } from './placement-routes.js';
import { isPublicPage, PAGE_ACCESS } from './pages/access.js';
import { ErrorPage, viewerOf } from './pages/layout.js';
import { sendPage } from './render.js';
import { reportRoutes } from './report-routes.js';
import { HTTPS_NEEDED, plainHttpElsewhere } from './plain-http.js';
import { CROSS_SITE, refuseCrossSite } from './same-origin.js';
import { signInRoutes } from './sign-in-routes.js';
import { statementRoutes } from './statement-routes.js';
import { PAGE, pageContext } from './support.js';
import { userRoutes } from './user-routes.js';
import { webhookRoutes } from './webhook-routes.js';

export type { DashboardDeps } from './context.js';

/** The answer to a form whose CSRF token is missing or wrong (an old tab, or another site's form). */
const STALE_FORM = 'this form has expired or did not come from the dashboard; reload the page and try again';

/** The routes of each area of the dashboard, each given the same dependencies. */
const AREA_ROUTES: ReadonlyArray<(app: FastifyInstance, deps: DashboardDeps) => Promise<void>> = [
  signInRoutes,
  keyRoutes,
  campaignRoutes,
  reportRoutes,
  userRoutes,
  partnerRoutes,
  advertiserRoutes,
  placementRoutes,
  operatorRoutes,
  flagRoutes,
  confirmRoutes,
  statementRoutes,
  webhookRoutes,
];

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
    // Counted and logged at most once a minute by the error handler below, not a line each.
    logLevel: 'debug',
  });
  app.decorateRequest('signedIn', null);
  app.addHook('onRequest', async (request) => {
    request.signedIn = (await deps.sessions.authenticate(request.cookies[SESSION_COOKIE])) ?? null;
  });
  // Before the CSRF check, so a NUL in a form's field is the same 400 with or without a session.
  app.addHook('preValidation', async (request) => refuseNulCharacters(request));
  // Every change needs a same-origin browser request and the form's CSRF token (D13).
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD') return done();
    refuseCrossSite(request, deps.publicUrl);
    app.csrfProtection(request, reply, done);
  });
  // Every page names who may open it (pages/access.ts): a page left out would open to anyone signed
  // in, so adding one without a rule fails at start instead.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.includes('GET') || isPublicPage(route.url) || route.url in PAGE_ACCESS) return;
    throw new Error(`the dashboard page ${route.url} has no rule in pages/access.ts of who may open it`);
  });
  // A page someone's account or role may not use answers 403 before its route reads anything (HEAD
  // too, which Fastify answers with the GET route, so its status would say the page opened).
  app.addHook('preHandler', async (request, reply) => {
    const { signedIn } = request;
    const rule = PAGE_ACCESS[request.routeOptions.url ?? ''];
    if (!['GET', 'HEAD'].includes(request.method) || !signedIn || !rule || rule.allows(viewerOf(signedIn)))
      return;
    const page = pageContext(request, reply);
    const message = rule.refusal ?? 'this page is not for your account';
    return sendPage(reply, ErrorPage({ page, title: 'Not available', message }), 403);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const csrf = error.code?.startsWith('FST_CSRF_') === true;
    const response: ErrorResponse = csrf
      ? { status: 403, message: STALE_FORM, fault: false }
      : describeError(error);
    if (response.fault) request.log.error({ err: error }, 'dashboard request failed');
    if (csrf) deps.refusals?.note('csrf');
    if (response.aborted) deps.refusals?.note('aborted_upload');
    const title =
      response.status >= 500
        ? 'Something went wrong'
        : response.status === 404
          ? 'Not found'
          : 'That did not work';
    let message = response.status === 401 ? 'your session has ended; sign in again' : response.message;
    // Over plain HTTP away from localhost, the browser dropped the cookies these checks need.
    if (response.status === 403 && (csrf || message === CROSS_SITE) && plainHttpElsewhere(request))
      message = `${message}. ${HTTPS_NEEDED}`;
    return sendPage(reply, ErrorPage({ page: pageContext(request, reply), title, message }), response.status);
  });

  app.get('/', PAGE, async (request, reply) => {
    const signedIn = request.signedIn;
    return reply.redirect(signedIn ? HOME[signedIn.user.account.kind] : '/sign-in', 303);
  });
  await app.register(assetRoutes);
  for (const routes of AREA_ROUTES) await app.register(routes, deps);
}
