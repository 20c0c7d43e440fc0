import type { FastifyInstance } from 'fastify';
import { keyView, PartnerService } from '../../services/partners.js';
import type { AdminContext } from './plugin.js';
import { fields, idParam, one, pageOf, pageRequest } from './support.js';

/** Partners and their API keys: create, list, update, rotate, revoke, suspend, reinstate, limits. */
export async function partnerRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const service = (request: Parameters<AdminContext['actor']>[0]) =>
    new PartnerService(context.store, context.actor(request), context.clock);

  app.get('/partners', async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await service(request).listPartners(page), page, (p) => p);
  });
  app.post('/partners', async (request, reply) => {
    const body = fields(request);
    const partner = await service(request).createPartner(
      body['name'] as string,
      body['blockedCategories'] ?? [],
    );
    return reply.code(201).send(one(partner));
  });
  app.get('/partners/:id', async (request) => one(await service(request).findPartner(idParam(request))));
  app.patch('/partners/:id', async (request) =>
    one(await service(request).updatePartner(idParam(request), fields(request))),
  );

  app.get('/partners/:id/keys', async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await service(request).listKeys(idParam(request), page), page, keyView);
  });
  app.post('/partners/:id/keys', async (request, reply) => {
    const label = fields(request)['label'];
    const { key, plaintext } = await service(request).createKey(
      idParam(request),
      typeof label === 'string' ? label : null,
    );
    return reply.code(201).send(one({ ...keyView(key), key: plaintext }));
  });
  app.get('/keys/:id', async (request) => one(keyView(await service(request).getKey(idParam(request)))));
  app.post('/keys/:id/rotate', async (request, reply) => {
    const hours = fields(request)['expiresInHours'];
    const rotated = await service(request).rotateKey(idParam(request), hours ?? undefined);
    return reply
      .code(201)
      .send(one({ ...keyView(rotated.key), key: rotated.plaintext, previous: keyView(rotated.previous) }));
  });
  app.post('/keys/:id/revoke', async (request) =>
    one(keyView(await service(request).revokeKey(idParam(request)))),
  );
  app.post('/keys/:id/suspend', async (request) =>
    one(keyView(await service(request).suspendKey(idParam(request), fields(request)['reason']))),
  );
  app.post('/keys/:id/reinstate', async (request) =>
    one(keyView(await service(request).reinstateKey(idParam(request)))),
  );
  app.put('/keys/:id/rate-limits', async (request) =>
    one(keyView(await service(request).setKeyLimits(idParam(request), fields(request)))),
  );
}
