import { Type } from 'typebox';
import { userView, type OneTimeLink } from '../../services/users.js';
import { Instant, One } from '../openapi/common.js';
import { operation, ref, Role } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import { body, type ManagementApp } from './typed-routes.js';

const linkView = (link: OneTimeLink) => ({ link: link.url, linkExpiresAt: link.expiresAt });

/** A one-time link, given out once: the store keeps only its digest. */
const Link = Type.Object({
  link: Type.String({ description: 'Pass it on: it works once, until `linkExpiresAt` (72 hours).' }),
  linkExpiresAt: Instant,
});

const userSchemas = recordSchemas('Users', ref('User'));
/** The routes on a user that answer a new one-time link for them. */
const linkSchemas = recordSchemas('Users', Link);

/** People who sign in to the dashboard (D13): the same service as `placard users` and the Users page. */
export async function userRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const users = callerService(context, (services, actor) => services.users(actor));

  const listUsers = userSchemas.page('listUsers', {
    summary: 'List users',
    description:
      "The users the caller may see: every account's for the operator, its own for an advertiser's or partner's. Users are the admins' (D13): a manager's or reporter's token gets 403.",
    filters: {
      account: Type.Optional(
        Type.String({
          description: 'Only this account: `operator`, `advertiser:<id or name>`, `partner:<id or name>`.',
        }),
      ),
    },
  });
  app.get('/users', { schema: listUsers }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await users(request).list(request.query.account, page), page, userView);
  });

  const createUser = {
    ...operation('createUser', 'Users', {
      summary: 'Create a user',
      description:
        'Creates a user without a password and answers their one-time invitation link, shown this once. Only an admin of the account (or of the operator) may. Audited.',
      ok: [201, One(Type.Intersect([ref('User'), Link])), 'Created; `link` is shown this once.'],
    }),
    body: body(
      Type.Object({
        email: Type.String({ format: 'email' }),
        account: Type.Optional(
          Type.String({
            description: '`operator` (the default), `advertiser:<id or name>` or `partner:<id or name>`.',
          }),
        ),
        role: Role,
      }),
    ),
  };
  app.post('/users', { schema: createUser }, async (request, reply) => {
    const { email, account, role } = request.body;
    const { user, link } = await users(request).create({ email, account: account ?? 'operator', role });
    return reply.code(201).send(one({ ...userView(user), ...linkView(link) }));
  });

  const getUser = userSchemas.byId('getUser', {
    summary: 'Get a user',
    description:
      "Another account's user is answered as missing (404); a manager's or reporter's token gets 403 (users are the admins').",
  });
  app.get('/users/:id', { schema: getUser }, async (request) =>
    one(userView(await users(request).get(request.params.id))),
  );

  const inviteUser = linkSchemas.byId('inviteUser', {
    summary: 'A new invitation link',
    description:
      "For a user who has not set a password yet; earlier links stop working (409 once a password is set). An admin's only.",
  });
  app.post('/users/:id/invite', { schema: inviteUser }, async (request) =>
    one(linkView(await users(request).invite(request.params.id))),
  );

  const resetUser = linkSchemas.byId('resetUser', {
    summary: 'A password-reset link',
    description:
      "Using it sets a new password and ends the user's sessions; earlier links stop working. An admin's only.",
  });
  app.post('/users/:id/reset', { schema: resetUser }, async (request) =>
    one(linkView(await users(request).reset(request.params.id))),
  );

  const disableUser = userSchemas.byId('disableUser', {
    summary: 'Disable a user',
    description: "They can no longer sign in, and their sessions end now. An admin's only. Audited.",
  });
  app.post('/users/:id/disable', { schema: disableUser }, async (request) =>
    one(userView(await users(request).disable(request.params.id))),
  );
}
