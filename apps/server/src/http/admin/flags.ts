import type { FastifyInstance } from 'fastify';
import { flagView, KeyFlagService } from '../../services/key-flags.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, idParam, one, pageOf, pageRequest } from './support.js';

/** Key flags (D15): read (the operator all, a partner its own), dismiss, suspend; the automatic policy. */
export async function flagRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const service = (request: Parameters<AdminContext['actor']>[0]) =>
    new KeyFlagService(context.store, context.actor(request), context.clock);

  app.get('/flags', { schema: MANAGEMENT_ROUTES.listFlags }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const page = pageRequest(query);
    return pageOf(await service(request).list({ status: query['status'] }, page), page, flagView);
  });
  app.get('/flags/:id', { schema: MANAGEMENT_ROUTES.getFlag }, async (request) =>
    one(flagView(await service(request).get(idParam(request)))),
  );
  app.post('/flags/:id/dismiss', { schema: MANAGEMENT_ROUTES.dismissFlag }, async (request) =>
    one(flagView(await service(request).dismiss(idParam(request), fields(request)['note']))),
  );
  app.post('/flags/:id/suspend', { schema: MANAGEMENT_ROUTES.suspendFlag }, async (request) =>
    one(flagView(await service(request).suspend(idParam(request), fields(request)['reason']))),
  );
  app.get('/flag-policy', { schema: MANAGEMENT_ROUTES.getFlagPolicy }, async (request) =>
    one(await service(request).policy()),
  );
  app.put('/flag-policy', { schema: MANAGEMENT_ROUTES.setFlagPolicy }, async (request) =>
    one(await service(request).setPolicy(fields(request))),
  );
}
