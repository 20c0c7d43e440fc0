import type { FastifyInstance } from 'fastify';
import { PlacementService } from '../../services/placements.js';
import type { AdminContext } from './plugin.js';
import { fields, one, pageOf, pageRequest } from './support.js';

/** Placements (D1) and the audit log. */
export async function registryRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const placements = (request: Parameters<AdminContext['actor']>[0]) =>
    new PlacementService(context.store, context.actor(request), context.clock);
  const placementId = (request: { params: unknown }) => (request.params as { id: string }).id;

  app.get('/placements', async (request) => ({ status: 'success', data: await placements(request).list() }));
  app.post('/placements', async (request, reply) => {
    const body = fields(request);
    return reply.code(201).send(one(await placements(request).add(body['id'], body['description'])));
  });
  app.get('/placements/:id', async (request) => one(await placements(request).get(placementId(request))));
  app.patch('/placements/:id', async (request) =>
    one(await placements(request).update(placementId(request), fields(request))),
  );
  app.post('/placements/:id/enable', async (request) =>
    one(await placements(request).update(placementId(request), { enabled: true })),
  );
  app.post('/placements/:id/disable', async (request) =>
    one(await placements(request).update(placementId(request), { enabled: false })),
  );

  app.get('/audit', async (request) => {
    const query = request.query as Record<string, unknown>;
    const page = pageRequest(query);
    const filter = {
      ...(typeof query['objectType'] === 'string' && { objectType: query['objectType'] }),
      ...(typeof query['objectId'] === 'string' && { objectId: query['objectId'] }),
    };
    return pageOf(await context.store.listAudit(filter, page), page, (entry) => entry);
  });
}
