import type { FastifyInstance } from 'fastify';
import { UserService, userView, type OneTimeLink } from '../../services/users.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, idParam, one, pageOf, pageRequest } from './support.js';

const linkView = (link: OneTimeLink) => ({ link: link.url, linkExpiresAt: link.expiresAt });

/** People who sign in to the dashboard (D13): the same service as `placard users` and the Users page. */
export async function userRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const users = (request: Parameters<AdminContext['actor']>[0]) =>
    new UserService(context.store, context.actor(request), context.publicUrl, context.clock);

  app.get('/users', { schema: MANAGEMENT_ROUTES.listUsers }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const page = pageRequest(query);
    return pageOf(await users(request).list(query['account'], page), page, userView);
  });
  app.post('/users', { schema: MANAGEMENT_ROUTES.createUser }, async (request, reply) => {
    const body = fields(request);
    const { user, link } = await users(request).create({
      email: body['email'],
      account: body['account'] ?? 'operator',
      role: body['role'],
    });
    return reply.code(201).send(one({ ...userView(user), ...linkView(link) }));
  });
  app.get('/users/:id', { schema: MANAGEMENT_ROUTES.getUser }, async (request) =>
    one(userView(await users(request).get(idParam(request)))),
  );
  app.post('/users/:id/invite', { schema: MANAGEMENT_ROUTES.inviteUser }, async (request) =>
    one(linkView(await users(request).invite(idParam(request)))),
  );
  app.post('/users/:id/reset', { schema: MANAGEMENT_ROUTES.resetUser }, async (request) =>
    one(linkView(await users(request).reset(idParam(request)))),
  );
  app.post('/users/:id/disable', { schema: MANAGEMENT_ROUTES.disableUser }, async (request) =>
    one(userView(await users(request).disable(idParam(request)))),
  );
}
