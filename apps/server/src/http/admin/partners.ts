import { Type } from 'typebox';
import { keyView, MAX_ROTATION_HOURS } from '../../services/partners.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { IdParams, Nullable, One, Page, PageQuery } from '../openapi/common.js';
import { NewApiKey, operation, RateLimits, ref } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { one, pageOf, pageRequest } from './support.js';
import { body, query, type ManagementApp } from './typed-routes.js';

/** Partners and their API keys: create, list, update, rotate, revoke, suspend, reinstate, limits. */
export async function partnerRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const service = (request: Parameters<AdminContext['actor']>[0]) =>
    context.services.partners(context.actor(request));
  const view = (key: ApiKeyRecord) => keyView(key, context.clock());

  const listPartners = {
    ...operation('listPartners', 'Partners', { summary: 'List partners', ok: [200, Page(ref('Partner'))] }),
    querystring: query(PageQuery),
  };
  app.get('/partners', { schema: listPartners }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await service(request).listPartners(page), page, (p) => p);
  });

  const createPartner = {
    ...operation('createPartner', 'Partners', {
      summary: 'Create a partner',
      ok: [201, One(ref('Partner')), 'Created.'],
    }),
    body: body(
      Type.Object({ name: Type.String(), blockedCategories: Type.Optional(Type.Array(Type.String())) }),
    ),
  };
  app.post('/partners', { schema: createPartner }, async (request, reply) => {
    const { name, blockedCategories } = request.body;
    const partner = await service(request).createPartner(name, blockedCategories ?? []);
    return reply.code(201).send(one(partner));
  });

  const getPartner = {
    ...operation('getPartner', 'Partners', { summary: 'Get a partner', ok: [200, One(ref('Partner'))] }),
    params: IdParams,
  };
  app.get('/partners/:id', { schema: getPartner }, async (request) =>
    one(await service(request).findPartner(request.params.id)),
  );

  const updatePartner = {
    ...operation('updatePartner', 'Partners', {
      summary: 'Rename a partner or change its blocked categories',
      ok: [200, One(ref('Partner'))],
    }),
    params: IdParams,
    body: body(
      Type.Object({
        name: Type.Optional(Type.String()),
        blockedCategories: Type.Optional(Type.Array(Type.String())),
      }),
    ),
  };
  app.patch('/partners/:id', { schema: updatePartner }, async (request) =>
    one(await service(request).updatePartner(request.params.id, request.body)),
  );

  const listKeys = {
    ...operation('listKeys', 'API keys', {
      summary: 'List a partner’s API keys',
      ok: [200, Page(ref('ApiKey'))],
    }),
    params: IdParams,
    querystring: query(PageQuery),
  };
  app.get('/partners/:id/keys', { schema: listKeys }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await service(request).listKeys(request.params.id, page), page, view);
  });

  const createKey = {
    ...operation('createKey', 'API keys', {
      summary: 'Issue an API key',
      description: 'The key is in the response once; only its SHA-256 digest is stored.',
      ok: [201, One(NewApiKey), 'Created; `key` is shown this once.'],
    }),
    params: IdParams,
    body: body(Type.Object({ label: Type.Optional(Type.String()) })),
  };
  app.post('/partners/:id/keys', { schema: createKey }, async (request, reply) => {
    const { key, plaintext } = await service(request).createKey(request.params.id, request.body.label);
    return reply.code(201).send(one({ ...view(key), key: plaintext }));
  });

  const getKey = {
    ...operation('getKey', 'API keys', { summary: 'Get an API key', ok: [200, One(ref('ApiKey'))] }),
    params: IdParams,
  };
  app.get('/keys/:id', { schema: getKey }, async (request) =>
    one(view(await service(request).getKey(request.params.id))),
  );

  const rotateKey = {
    ...operation('rotateKey', 'API keys', {
      summary: 'Rotate an API key',
      description:
        'Issues a replacement; the old key keeps working for `expiresInHours` (default 24; 0 ends it now). Only an active key that was never rotated can be: 409 otherwise. The body may be left out.',
      ok: [
        201,
        One(Type.Intersect([NewApiKey, Type.Object({ previous: ref('ApiKey') })])),
        'The new key (shown this once) and the old one.',
      ],
    }),
    params: IdParams,
    body: body(
      Type.Object({
        expiresInHours: Type.Optional(
          Nullable(
            Type.Number({
              minimum: 0,
              maximum: MAX_ROTATION_HOURS,
              description: 'Hours, fractions allowed; null or absent means 24.',
            }),
          ),
        ),
      }),
    ),
  };
  app.post('/keys/:id/rotate', { schema: rotateKey }, async (request, reply) => {
    const hours = request.body.expiresInHours;
    const rotated = await service(request).rotateKey(request.params.id, hours ?? undefined);
    return reply
      .code(201)
      .send(one({ ...view(rotated.key), key: rotated.plaintext, previous: view(rotated.previous) }));
  });

  const revokeKey = {
    ...operation('revokeKey', 'API keys', {
      summary: 'Revoke an API key',
      description: 'Every instance answers 401 for it within 2 s.',
      ok: [200, One(ref('ApiKey'))],
    }),
    params: IdParams,
  };
  app.post('/keys/:id/revoke', { schema: revokeKey }, async (request) =>
    one(view(await service(request).revokeKey(request.params.id))),
  );

  const suspendKey = {
    ...operation('suspendKey', 'API keys', {
      summary: 'Suspend an API key (click fraud)',
      description: 'Every instance answers 403 `api key suspended` for it within 2 s.',
      ok: [200, One(ref('ApiKey'))],
    }),
    params: IdParams,
    body: body(Type.Object({ reason: Type.String() })),
  };
  app.post('/keys/:id/suspend', { schema: suspendKey }, async (request) =>
    one(view(await service(request).suspendKey(request.params.id, request.body.reason))),
  );

  const reinstateKey = {
    ...operation('reinstateKey', 'API keys', { summary: 'Lift a suspension', ok: [200, One(ref('ApiKey'))] }),
    params: IdParams,
  };
  app.post('/keys/:id/reinstate', { schema: reinstateKey }, async (request) =>
    one(view(await service(request).reinstateKey(request.params.id))),
  );

  const setKeyLimits = {
    ...operation('setKeyLimits', 'API keys', {
      summary: 'Change a key’s own rate limits',
      description:
        'Per second and burst, for fetch and for events. Only the fields given change: an absent field keeps its value, `null` puts it back to the default (D7).',
      ok: [200, One(ref('ApiKey'))],
    }),
    params: IdParams,
    body: body(Type.Partial(RateLimits)),
  };
  app.put('/keys/:id/rate-limits', { schema: setKeyLimits }, async (request) =>
    one(view(await service(request).setKeyLimits(request.params.id, request.body))),
  );
}
