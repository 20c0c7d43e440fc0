import type { FastifyInstance } from 'fastify';
import { keyView, PartnerService } from '../../services/partners.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, idParam, one, pageOf, pageRequest } from './support.js';

/** Partners and their API keys: create, list, update, rotate, revoke, suspend, reinstate, limits. */
export async function partnerRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const service = (request: Parameters<AdminContext['actor']>[0]) =>
    new PartnerService(context.store, context.actor(request), context.clock);
  const view = (key: ApiKeyRecord) => keyView(key, context.clock());

  app.get('/partners', { schema: MANAGEMENT_ROUTES.listPartners }, async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await service(request).listPartners(page), page, (p) => p);
  });
  app.post('/partners', { schema: MANAGEMENT_ROUTES.createPartner }, async (request, reply) => {
    const body = fields(request);
    const partner = await service(request).createPartner(
      body['name'] as string,
      body['blockedCategories'] ?? [],
    );
    return reply.code(201).send(one(partner));
  });
  app.get('/partners/:id', { schema: MANAGEMENT_ROUTES.getPartner }, async (request) =>
    one(await service(request).findPartner(idParam(request))),
  );
  app.patch('/partners/:id', { schema: MANAGEMENT_ROUTES.updatePartner }, async (request) =>
    one(await service(request).updatePartner(idParam(request), fields(request))),
  );

  app.get('/partners/:id/keys', { schema: MANAGEMENT_ROUTES.listKeys }, async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await service(request).listKeys(idParam(request), page), page, view);
  });
  app.post('/partners/:id/keys', { schema: MANAGEMENT_ROUTES.createKey }, async (request, reply) => {
    const { key, plaintext } = await service(request).createKey(idParam(request), fields(request)['label']);
    return reply.code(201).send(one({ ...view(key), key: plaintext }));
  });
  app.get('/keys/:id', { schema: MANAGEMENT_ROUTES.getKey }, async (request) =>
    one(view(await service(request).getKey(idParam(request)))),
  );
  app.post('/keys/:id/rotate', { schema: MANAGEMENT_ROUTES.rotateKey }, async (request, reply) => {
    const hours = fields(request)['expiresInHours'];
    const rotated = await service(request).rotateKey(idParam(request), hours ?? undefined);
    return reply
      .code(201)
      .send(one({ ...view(rotated.key), key: rotated.plaintext, previous: view(rotated.previous) }));
  });
  app.post('/keys/:id/revoke', { schema: MANAGEMENT_ROUTES.revokeKey }, async (request) =>
    one(view(await service(request).revokeKey(idParam(request)))),
  );
  app.post('/keys/:id/suspend', { schema: MANAGEMENT_ROUTES.suspendKey }, async (request) =>
    one(view(await service(request).suspendKey(idParam(request), fields(request)['reason']))),
  );
  app.post('/keys/:id/reinstate', { schema: MANAGEMENT_ROUTES.reinstateKey }, async (request) =>
    one(view(await service(request).reinstateKey(idParam(request)))),
  );
  app.put('/keys/:id/rate-limits', { schema: MANAGEMENT_ROUTES.setKeyLimits }, async (request) =>
    one(view(await service(request).setKeyLimits(idParam(request), fields(request)))),
  );
}
