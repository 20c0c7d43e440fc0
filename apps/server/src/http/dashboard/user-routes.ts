import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SignedIn } from '../../services/sessions.js';
import { userView, type OneTimeLink } from '../../services/users.js';
import { accountLabel } from '../../domain/accounts.js';
import { accountIds, accountName } from '../../services/names.js';
import type { DashboardDeps } from './context.js';
import { refusal } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import type { Refused } from './pages/layout.js';
import { InvitationPage, UsersPage } from './pages/users.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** An account's users and invitations, for its admins (D13). */
export async function userRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const users = (signedIn: SignedIn) => deps.services.users(signedIn.actor);

  async function usersPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) {
    const asked = pageAsked(request);
    const found = await users(signedIn).page(asked);
    const names = await deps.services.namesOf(
      signedIn.actor,
      accountIds(found.rows.map((user) => user.account)),
    );
    return UsersPage({
      page: pageContext(request, reply),
      users: found.rows.map((user) => ({ ...userView(user), accountName: accountName(user.account, names) })),
      paging: pagingOf(request, '/users', asked, found),
      operator: signedIn.user.account.kind === 'operator',
      ...(refused && { refused }),
    });
  }

  app.get('/users', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await usersPage(request, reply, signedIn));
  });

  app.post('/users', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const { email, role, account } = formFields(request);
    let invited: { email: string; link: OneTimeLink } | undefined;
    const refused = await attempt(
      reply,
      async () => {
        // People invite into their own account; the operator's admins into any.
        const into =
          signedIn.user.account.kind === 'operator'
            ? (account ?? 'operator')
            : accountLabel(signedIn.user.account);
        const { user, link } = await users(signedIn).create({ email, role, account: into });
        invited = { email: user.email, link };
      },
      (problem, problems) => usersPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused || !invited) return reply;
    return sendPage(reply, InvitationPage({ page: pageContext(request, reply), ...invited }), 201);
  });
}
