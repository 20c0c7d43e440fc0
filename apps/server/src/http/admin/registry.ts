import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { operation, ref } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import type { ManagementApp } from './typed-routes.js';

/** A placement is named by its slug, not by a numeric id. */
const placementSchemas = recordSchemas('Placements', ref('Placement'), Type.Object({ id: Type.String() }));
const auditSchemas = recordSchemas('Audit', ref('AuditRecord'));

/** Placements (D1) and the audit log. */
export async function registryRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const placements = callerService(context, (services, actor) => services.placements(actor));

  const listPlacements = operation('listPlacements', 'Placements', {
    summary: 'List placements',
    ok: [200, Type.Object({ status: Type.Literal('success'), data: Type.Array(ref('Placement')) })],
  });
  app.get('/placements', { schema: listPlacements }, async (request) => ({
    status: 'success',
    data: await placements(request).list(),
  }));

  const addPlacement = placementSchemas.created('addPlacement', {
    summary: 'Add a placement',
    body: Type.Object({ id: Type.String({ description: 'A slug.' }), description: Type.String() }),
  });
  app.post('/placements', { schema: addPlacement }, async (request, reply) => {
    const { id, description } = request.body;
    return reply.code(201).send(one(await placements(request).add(id, description)));
  });

  const getPlacement = placementSchemas.byId('getPlacement', { summary: 'Get a placement' });
  app.get('/placements/:id', { schema: getPlacement }, async (request) =>
    one(await placements(request).get(request.params.id)),
  );

  const updatePlacement = placementSchemas.byId('updatePlacement', {
    summary: 'Describe, enable or disable a placement',
    body: Type.Object({ description: Type.Optional(Type.String()), enabled: Type.Optional(Type.Boolean()) }),
  });
  app.patch('/placements/:id', { schema: updatePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, request.body)),
  );

  const enablePlacement = placementSchemas.byId('enablePlacement', { summary: 'Enable a placement' });
  app.post('/placements/:id/enable', { schema: enablePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, { enabled: true })),
  );

  const disablePlacement = placementSchemas.byId('disablePlacement', {
    summary: 'Disable a placement',
    description: 'Fetch for it answers 400 `unknown placement` within 2 s.',
  });
  app.post('/placements/:id/disable', { schema: disablePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, { enabled: false })),
  );

  const listAudit = auditSchemas.page('listAudit', {
    summary: 'Read the audit log',
    description:
      'Oldest first by default; `order=newest` gives the latest entries first, and its `nextCursor` pages towards older ones.',
    filters: {
      objectType: Type.Optional(Type.String()),
      objectId: Type.Optional(Type.String()),
      order: Type.Optional(
        Type.Union([Type.Literal('oldest'), Type.Literal('newest')], { default: 'oldest' }),
      ),
    },
  });
  app.get('/audit', { schema: listAudit }, async (request) => {
    const { objectType, objectId, order = 'oldest' } = request.query;
    if (order !== 'oldest' && order !== 'newest') throw invalid('order must be oldest or newest');
    const page = { ...pageRequest(request.query), newestFirst: order === 'newest' };
    const filter = {
      ...(typeof objectType === 'string' && { objectType }),
      ...(typeof objectId === 'string' && { objectId }),
    };
    return pageOf(await context.services.audit(context.actor(request), filter, page), page, (entry) => entry);
  });
}
