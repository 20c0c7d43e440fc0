import type { FastifyInstance } from 'fastify';
import { adminTokenView } from '../../services/admin-tokens.js';
import type { AdminTokenRecord } from '../../store/store.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, idParam, one, pageOf, pageRequest } from './support.js';

/** Admin tokens: create, list, get, revoke. */
export async function tokenRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const view = (token: AdminTokenRecord) => adminTokenView(token, context.clock());

  app.get('/tokens', { schema: MANAGEMENT_ROUTES.listAdminTokens }, async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await context.tokens.list(page, context.actor(request)), page, view);
  });
  app.post('/tokens', { schema: MANAGEMENT_ROUTES.createAdminToken }, async (request, reply) => {
    const body = fields(request);
    const { token, plaintext } = await context.tokens.create(
      {
        label: body['label'],
        expiresInHours: body['expiresInHours'],
        account: body['account'],
        role: body['role'],
      },
      context.actor(request),
    );
    return reply.code(201).send(one({ ...view(token), token: plaintext }));
  });
  app.get('/tokens/:id', { schema: MANAGEMENT_ROUTES.getAdminToken }, async (request) =>
    one(view(await context.tokens.get(idParam(request), context.actor(request)))),
  );
  app.post('/tokens/:id/revoke', { schema: MANAGEMENT_ROUTES.revokeAdminToken }, async (request) =>
    one(view(await context.tokens.revoke(idParam(request), context.actor(request)))),
  );
}
