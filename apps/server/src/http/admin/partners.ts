import { Type } from 'typebox';
import { isoTimes } from '../../services/iso-times.js';
import { keyView, MAX_ROTATION_HOURS } from '../../services/partners.js';
import type { ApiKeyRecord } from '../../store/store.js';
import { IdParams, Nullable, One } from '../openapi/common.js';
import { BlockedAdvertisers, NewApiKey, operation, RateLimits, ref } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import { body, type ManagementApp } from './typed-routes.js';

const partnerSchemas = recordSchemas('Partners', ref('Partner'));
const keySchemas = recordSchemas('API keys', ref('ApiKey'));

/** Partners and their API keys: create, list, update, rotate, revoke, suspend, reinstate, limits. */
export async function partnerRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const service = callerService(context, (services, actor) => services.partners(actor));
  const view = (key: ApiKeyRecord) => keyView(key, context.clock());

  const listPartners = partnerSchemas.page('listPartners', { summary: 'List partners' });
  app.get('/partners', { schema: listPartners }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await service(request).listPartners(page), page, (p) => p);
  });

  const createPartner = partnerSchemas.created('createPartner', {
    summary: 'Create a partner',
    body: Type.Object({
      name: Type.String(),
      blockedCategories: Type.Optional(Type.Array(Type.String())),
      blockedAdvertisers: Type.Optional(BlockedAdvertisers),
    }),
  });
  app.post('/partners', { schema: createPartner }, async (request, reply) => {
    const { name, blockedCategories, blockedAdvertisers } = request.body;
    const partner = await service(request).createPartner(
      name,
      blockedCategories ?? [],
      blockedAdvertisers ?? [],
    );
    return reply.code(201).send(one(partner));
  });

  const getPartner = partnerSchemas.byId('getPartner', { summary: 'Get a partner' });
  app.get('/partners/:id', { schema: getPartner }, async (request) =>
    one(await service(request).findPartner(request.params.id)),
  );

  const updatePartner = partnerSchemas.byId('updatePartner', {
    summary: 'Rename a partner or change what it blocks',
    description:
      'Its name and blocked categories are the operator’s to change; its blocked advertisers also its own people’s (a body with `blockedAdvertisers` alone). An id that names no advertiser the caller knows is refused with 400 naming it: a partner’s people know the advertisers of the campaigns they may be served.',
    body: Type.Object({
      name: Type.Optional(Type.String()),
      blockedCategories: Type.Optional(Type.Array(Type.String())),
      blockedAdvertisers: Type.Optional(BlockedAdvertisers),
    }),
  });
  app.patch('/partners/:id', { schema: updatePartner }, async (request) =>
    one(await service(request).updatePartner(request.params.id, request.body)),
  );

  const shares = callerService(context, (services, actor) => services.revenueShares(actor));

  const listRevenueShares = {
    ...operation('listRevenueShares', 'Partners', {
      summary: 'List a partner’s revenue shares',
      description:
        'Every share set, the latest to take effect first; the first whose `effectiveFrom` has passed is in force. The partner’s own tokens read theirs.',
      ok: [200, Type.Object({ status: Type.Literal('success'), data: Type.Array(ref('RevenueShare')) })],
    }),
    params: IdParams,
  };
  app.get('/partners/:id/revenue-shares', { schema: listRevenueShares }, async (request) => ({
    status: 'success',
    data: isoTimes(await shares(request).list(request.params.id)),
  }));

  const setRevenueShare = {
    ...operation('setRevenueShare', 'Partners', {
      summary: 'Set a partner’s revenue share from a date',
      description:
        'The operator’s only. From the start of `effectiveDate` in the billing time zone (`PLACARD_BILLING_TIME_ZONE`), or from now when it is today; a past date is refused with 422, since earnings already made never change. Each charged event earns its partner the share in force when it happened.',
      ok: [201, One(ref('RevenueShare')), 'Set.'],
    }),
    params: IdParams,
    body: body(
      Type.Object({
        basisPoints: Type.Integer({ description: 'From 0 to 10000: 7000 is 70%.' }),
        effectiveDate: Type.String({ description: 'A date, `YYYY-MM-DD`: today or later.' }),
      }),
    ),
  };
  app.post('/partners/:id/revenue-shares', { schema: setRevenueShare }, async (request, reply) => {
    const share = await shares(request).set(request.params.id, request.body);
    return reply.code(201).send(one(share));
  });

  // A page of one partner's keys: the partner's id in the path.
  const listKeys = {
    ...keySchemas.page('listKeys', { summary: 'List a partner’s API keys' }),
    params: IdParams,
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

  const getKey = keySchemas.byId('getKey', { summary: 'Get an API key' });
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

  const revokeKey = keySchemas.byId('revokeKey', {
    summary: 'Revoke an API key',
    description: 'Every instance answers 401 for it within 2 s.',
  });
  app.post('/keys/:id/revoke', { schema: revokeKey }, async (request) =>
    one(view(await service(request).revokeKey(request.params.id))),
  );

  const suspendKey = keySchemas.byId('suspendKey', {
    summary: 'Suspend an API key (click fraud)',
    description: 'Every instance answers 403 `api key suspended` for it within 2 s.',
    body: Type.Object({ reason: Type.String() }),
  });
  app.post('/keys/:id/suspend', { schema: suspendKey }, async (request) =>
    one(view(await service(request).suspendKey(request.params.id, request.body.reason))),
  );

  const reinstateKey = keySchemas.byId('reinstateKey', { summary: 'Lift a suspension' });
  app.post('/keys/:id/reinstate', { schema: reinstateKey }, async (request) =>
    one(view(await service(request).reinstateKey(request.params.id))),
  );

  const setKeyLimits = keySchemas.byId('setKeyLimits', {
    summary: 'Change a key’s own rate limits',
    description:
      'Per second and burst, for fetch and for events. Only the fields given change: an absent field keeps its value, `null` puts it back to the default (D7).',
    body: Type.Partial(RateLimits),
  });
  app.put('/keys/:id/rate-limits', { schema: setKeyLimits }, async (request) =>
    one(view(await service(request).setKeyLimits(request.params.id, request.body))),
  );
}
