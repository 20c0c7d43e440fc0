import type { FastifyInstance } from 'fastify';
import type { AdminContext, AdminDeps } from './context.js';
import { AuthFailureLimiter, authenticateLimited } from '../auth-failures.js';
import { installErrorHandler, managementErrorBody } from '../errors.js';
import { campaignRoutes } from './campaigns.js';
import { flagRoutes } from './flags.js';
import { refuseUnknownInput } from './known-fields.js';
import { refuseNulCharacters } from '../nul-characters.js';
import { partnerRoutes } from './partners.js';
import { moneyRoutes } from './money.js';
import { registryRoutes } from './registry.js';
import { reportRoutes } from './reports.js';
import { statementRoutes } from './statements.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';
import { webhookRoutes } from './webhooks.js';
import { validate, type ManagementTypes } from './typed-routes.js';

export type { AdminContext, AdminDeps } from './context.js';

/** The management API under /admin/v1, authenticated with an admin token. */
export async function adminApi(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  app.decorateRequest('adminActor', null);
  const failures = deps.authFailures ?? new AuthFailureLimiter();
  app.addHook('onRequest', async (request) => {
    request.adminActor = await authenticateLimited(deps.tokens, failures, request);
  });
  // After authentication, so an unknown caller learns nothing about the fields a route takes.
  app.addHook('preValidation', async (request) => {
    refuseUnknownInput(request);
    refuseNulCharacters(request);
  });
  installErrorHandler(app, managementErrorBody, deps.refusals);
  // Path ids parsed and bodies read as objects, as the routes' types say (typed-routes.ts).
  app.setValidatorCompiler(validate);
  // Named fields only: Fastify's own options (such as `prefix`) must not reach the child plugins.
  const context: AdminContext = {
    services: deps.services,
    tokens: deps.tokens,
    clock: deps.clock,
    actor: (request) => {
      if (!request.adminActor) throw new Error('admin route reached without authentication');
      return request.adminActor;
    },
  };
  const routes = app.withTypeProvider<ManagementTypes>();
  await routes.register(partnerRoutes, context);
  await routes.register(campaignRoutes, context);
  await routes.register(registryRoutes, context);
  await routes.register(reportRoutes, context);
  await routes.register(moneyRoutes, context);
  await routes.register(statementRoutes, context);
  await routes.register(tokenRoutes, context);
  await routes.register(userRoutes, context);
  await routes.register(flagRoutes, context);
  await routes.register(webhookRoutes, context);
}
