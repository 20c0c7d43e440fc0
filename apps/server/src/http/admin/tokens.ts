import { Type } from 'typebox';
import { adminTokenView } from '../../services/admin-tokens.js';
import type { AdminTokenRecord } from '../../store/store.js';
import { One } from '../openapi/common.js';
import { operation, ref, Role } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import { body, type ManagementApp } from './typed-routes.js';

const tokenSchemas = recordSchemas('Admin tokens', ref('AdminToken'));

/** Admin tokens: create, list, get, revoke. */
export async function tokenRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const view = (token: AdminTokenRecord) => adminTokenView(token, context.clock());

  const listAdminTokens = tokenSchemas.page('listAdminTokens', {
    summary: 'List admin tokens',
    description: 'Every token ever issued, with its prefix, status and last use; never the token itself.',
  });
  app.get('/tokens', { schema: listAdminTokens }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await context.tokens.list(page, context.actor(request)), page, view);
  });

  const createAdminToken = {
    ...operation('createAdminToken', 'Admin tokens', {
      summary: 'Issue an admin token',
      description:
        'The token is in the response once; only its SHA-256 digest is stored. Without `expiresInHours` it never expires; without `account` and `role` it acts as an operator admin. Only operator admins manage tokens. Audited.',
      ok: [
        201,
        One(
          Type.Intersect([
            ref('AdminToken'),
            Type.Object({
              token: Type.String({ description: 'The token itself: shown this once, never again.' }),
            }),
          ]),
        ),
        'Created; `token` is shown this once.',
      ],
    }),
    body: body(
      Type.Object({
        label: Type.String({ minLength: 1, maxLength: 100, description: 'Who or what it is for.' }),
        expiresInHours: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 87_600 })),
        account: Type.Optional(
          Type.String({
            description:
              'What the token acts for: `operator` (the default), `advertiser:<id or name>` or `partner:<id or name>`.',
          }),
        ),
        role: Type.Optional(Role),
      }),
    ),
  };
  app.post('/tokens', { schema: createAdminToken }, async (request, reply) => {
    const { label, expiresInHours, account, role } = request.body;
    const { token, plaintext } = await context.tokens.create(
      { label, expiresInHours, account, role },
      context.actor(request),
    );
    return reply.code(201).send(one({ ...view(token), token: plaintext }));
  });

  const getAdminToken = tokenSchemas.byId('getAdminToken', { summary: 'Get an admin token' });
  app.get('/tokens/:id', { schema: getAdminToken }, async (request) =>
    one(view(await context.tokens.get(request.params.id, context.actor(request)))),
  );

  const revokeAdminToken = tokenSchemas.byId('revokeAdminToken', {
    summary: 'Revoke an admin token',
    description:
      'It answers 401 from the next request on. A token may revoke itself; the last active token cannot be revoked (409): create its successor first. Audited.',
  });
  app.post('/tokens/:id/revoke', { schema: revokeAdminToken }, async (request) =>
    one(view(await context.tokens.revoke(request.params.id, context.actor(request)))),
  );
}
