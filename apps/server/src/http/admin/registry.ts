import { Type } from 'typebox';
import { invalid } from '../../domain/errors.js';
import { One, Page, PageQuery } from '../openapi/common.js';
import { operation, ref } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { one, pageOf, pageRequest } from './support.js';
import { body, query, type ManagementApp } from './typed-routes.js';

/** A placement is named by its slug, not by a numeric id. */
const PlacementParams = Type.Object({ id: Type.String() });

/** A placement route's schema: the placement in its path, and the placement answered. */
function placementSchema(operationId: string, summary: string, description?: string) {
  return {
    ...operation(operationId, 'Placements', {
      summary,
      ...(description !== undefined && { description }),
      ok: [200, One(ref('Placement'))],
    }),
    params: PlacementParams,
  };
}

/** Placements (D1) and the audit log. */
export async function registryRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const placements = (request: Parameters<AdminContext['actor']>[0]) =>
    context.services.placements(context.actor(request));

  const listPlacements = operation('listPlacements', 'Placements', {
    summary: 'List placements',
    ok: [200, Type.Object({ status: Type.Literal('success'), data: Type.Array(ref('Placement')) })],
  });
  app.get('/placements', { schema: listPlacements }, async (request) => ({
    status: 'success',
    data: await placements(request).list(),
  }));

  const addPlacement = {
    ...operation('addPlacement', 'Placements', {
      summary: 'Add a placement',
      ok: [201, One(ref('Placement')), 'Created.'],
    }),
    body: body(Type.Object({ id: Type.String({ description: 'A slug.' }), description: Type.String() })),
  };
  app.post('/placements', { schema: addPlacement }, async (request, reply) => {
    const { id, description } = request.body;
    return reply.code(201).send(one(await placements(request).add(id, description)));
  });

  app.get(
    '/placements/:id',
    { schema: placementSchema('getPlacement', 'Get a placement') },
    async (request) => one(await placements(request).get(request.params.id)),
  );

  const updatePlacement = {
    ...placementSchema('updatePlacement', 'Describe, enable or disable a placement'),
    body: body(
      Type.Object({ description: Type.Optional(Type.String()), enabled: Type.Optional(Type.Boolean()) }),
    ),
  };
  app.patch('/placements/:id', { schema: updatePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, request.body)),
  );

  const enablePlacement = placementSchema('enablePlacement', 'Enable a placement');
  app.post('/placements/:id/enable', { schema: enablePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, { enabled: true })),
  );

  const disablePlacement = placementSchema(
    'disablePlacement',
    'Disable a placement',
    'Fetch for it answers 400 `unknown placement` within 2 s.',
  );
  app.post('/placements/:id/disable', { schema: disablePlacement }, async (request) =>
    one(await placements(request).update(request.params.id, { enabled: false })),
  );

  const listAudit = {
    ...operation('listAudit', 'Audit', {
      summary: 'Read the audit log',
      description:
        'Oldest first by default; `order=newest` gives the latest entries first, and its `nextCursor` pages towards older ones.',
      ok: [200, Page(ref('AuditRecord'))],
    }),
    querystring: query(
      Type.Intersect([
        PageQuery,
        Type.Object({
          objectType: Type.Optional(Type.String()),
          objectId: Type.Optional(Type.String()),
          order: Type.Optional(
            Type.Union([Type.Literal('oldest'), Type.Literal('newest')], { default: 'oldest' }),
          ),
        }),
      ]),
    ),
  };
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
