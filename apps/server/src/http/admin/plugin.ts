import type { FastifyInstance } from 'fastify';
import type { AdminContext, AdminDeps } from './context.js';
import { AuthFailureLimiter, authenticateLimited } from '../auth-failures.js';
import { installErrorHandler, managementErrorBody } from '../errors.js';
import { campaignRoutes } from './campaigns.js';
import { flagRoutes } from './flags.js';
import { refuseUnknownInput } from './known-fields.js';
import { refuseNulCharacters } from './nul-characters.js';
import { partnerRoutes } from './partners.js';
import { registryRoutes } from './registry.js';
import { reportRoutes } from './reports.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';

export type { AdminContext, AdminDeps } from './context.js';

/** The management API under /admin/v1, authenticated with an admin token. */
export async function adminApi(app: FastifyInstance, deps: AdminDeps): Promise<void> {
  app.decorateRequest('adminActor', null);
  const failures = deps.authFailures ?? new AuthFailureLimiter(undefined, deps.clock);
  app.addHook('onRequest', async (request) => {
    request.adminActor = await authenticateLimited(deps.tokens, failures, request);
  });
  // After authentication, so an unknown caller learns nothing about the fields a route takes.
  app.addHook('preValidation', async (request) => {
    refuseUnknownInput(request);
    refuseNulCharacters(request);
  });
  installErrorHandler(app, managementErrorBody);
  app.addHook('onResponse', async (request, reply) => {
    if (request.method !== 'GET' && reply.statusCode < 400) deps.afterChange();
  });
  // Named fields only: Fastify's own options (such as `prefix`) must not reach the child plugins.
  const context: AdminContext = {
    store: deps.store,
    tokens: deps.tokens,
    clock: deps.clock,
    index: deps.index,
    afterChange: deps.afterChange,
    publicUrl: deps.publicUrl,
    actor: (request) => {
      if (!request.adminActor) throw new Error('admin route reached without authentication');
      return request.adminActor;
    },
  };
  await app.register(partnerRoutes, context);
  await app.register(campaignRoutes, context);
  await app.register(registryRoutes, context);
  await app.register(reportRoutes, context);
  await app.register(tokenRoutes, context);
  await app.register(userRoutes, context);
  await app.register(flagRoutes, context);
}
