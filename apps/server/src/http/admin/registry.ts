import type { FastifyInstance } from 'fastify';
import { invalid } from '../../domain/errors.js';
import { PlacementService } from '../../services/placements.js';
import { readAudit } from '../../services/audit.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, one, pageOf, pageRequest } from './support.js';

/** Placements (D1) and the audit log. */
export async function registryRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const placements = (request: Parameters<AdminContext['actor']>[0]) =>
    new PlacementService(context.store, context.actor(request), context.clock);
  const placementId = (request: { params: unknown }) => (request.params as { id: string }).id;

  app.get('/placements', { schema: MANAGEMENT_ROUTES.listPlacements }, async (request) => ({
    status: 'success',
    data: await placements(request).list(),
  }));
  app.post('/placements', { schema: MANAGEMENT_ROUTES.addPlacement }, async (request, reply) => {
    const body = fields(request);
    return reply.code(201).send(one(await placements(request).add(body['id'], body['description'])));
  });
  app.get('/placements/:id', { schema: MANAGEMENT_ROUTES.getPlacement }, async (request) =>
    one(await placements(request).get(placementId(request))),
  );
  app.patch('/placements/:id', { schema: MANAGEMENT_ROUTES.updatePlacement }, async (request) =>
    one(await placements(request).update(placementId(request), fields(request))),
  );
  app.post('/placements/:id/enable', { schema: MANAGEMENT_ROUTES.enablePlacement }, async (request) =>
    one(await placements(request).update(placementId(request), { enabled: true })),
  );
  app.post('/placements/:id/disable', { schema: MANAGEMENT_ROUTES.disablePlacement }, async (request) =>
    one(await placements(request).update(placementId(request), { enabled: false })),
  );

  app.get('/audit', { schema: MANAGEMENT_ROUTES.listAudit }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const order = query['order'] ?? 'oldest';
    if (order !== 'oldest' && order !== 'newest') throw invalid('order must be oldest or newest');
    const page = { ...pageRequest(query), newestFirst: order === 'newest' };
    const filter = {
      ...(typeof query['objectType'] === 'string' && { objectType: query['objectType'] }),
      ...(typeof query['objectId'] === 'string' && { objectId: query['objectId'] }),
    };
    return pageOf(
      await readAudit(context.store, context.actor(request), filter, page),
      page,
      (entry) => entry,
    );
  });
}
