import { Type } from 'typebox';
import { FLAG_STATUSES } from '../../domain/key-flags.js';
import { flagView } from '../../services/key-flags.js';
import { FlagPolicy, ref } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import type { ManagementApp } from './typed-routes.js';

const flagSchemas = recordSchemas('Flags', ref('KeyFlag'));
const policySchemas = recordSchemas('Flags', ref('FlagPolicy'));

/** Key flags (D15): read (the operator all, a partner its own), dismiss, suspend; the automatic policy. */
export async function flagRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const service = callerService(context, (services, actor) => services.keyFlags(actor));

  const listFlags = flagSchemas.page('listFlags', {
    summary: 'List key flags',
    description:
      'Newest first. The operator sees every flag; a partner’s token its own keys’ flags; an advertiser’s none.',
    filters: { status: Type.Optional(Type.Union(FLAG_STATUSES.map((status) => Type.Literal(status)))) },
  });
  app.get('/flags', { schema: listFlags }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await service(request).list({ status: request.query.status }, page), page, flagView);
  });

  const getFlag = flagSchemas.byId('getFlag', { summary: 'Get a key flag' });
  app.get('/flags/:id', { schema: getFlag }, async (request) =>
    one(flagView(await service(request).get(request.params.id))),
  );

  const dismissFlag = flagSchemas.byId('dismissFlag', {
    summary: 'Dismiss a flag',
    description:
      'Reviewed and fine: the flag closes, and the key is not flagged for that signal again for 24 hours. Operator only; audited (409 once reviewed).',
    body: Type.Object({
      note: Type.String({ minLength: 1, maxLength: 500, description: 'Why, for the audit log.' }),
    }),
  });
  app.post('/flags/:id/dismiss', { schema: dismissFlag }, async (request) =>
    one(flagView(await service(request).dismiss(request.params.id, request.body.note))),
  );

  const suspendFlag = flagSchemas.byId('suspendFlag', {
    summary: 'Suspend the flagged key',
    description:
      'Suspends the key (every instance answers 403 `api key suspended` within 2 s) and closes the flag. Without `reason`, the partner reads the flag’s summary. Operator only; both audited (409 once reviewed).',
    body: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }),
  });
  app.post('/flags/:id/suspend', { schema: suspendFlag }, async (request) =>
    one(flagView(await service(request).suspend(request.params.id, request.body.reason))),
  );

  const getFlagPolicy = policySchemas.single('getFlagPolicy', {
    summary: 'Read the automatic suspension policy',
    description: 'Off by default. Operator only.',
  });
  app.get('/flag-policy', { schema: getFlagPolicy }, async (request) => one(await service(request).policy()));

  const setFlagPolicy = policySchemas.single('setFlagPolicy', {
    summary: 'Change the automatic suspension policy',
    description:
      'Only the fields given change. When on, a flag of one of `signals` whose measure reaches its threshold times `multiplier` suspends its key at once, as `system`, audited. Operator admins and managers only; audited.',
    body: Type.Partial(FlagPolicy),
  });
  app.put('/flag-policy', { schema: setFlagPolicy }, async (request) =>
    one(await service(request).setPolicy(request.body)),
  );
}
