import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SignedIn } from '../../services/sessions.js';
import { UserService, userView, type OneTimeLink } from '../../services/users.js';
import { accountLabel } from '../../domain/accounts.js';
import type { DashboardDeps } from './context.js';
import { InvitationPage, UsersPage } from './pages/users.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** An account's users and invitations, for its admins (D13). */
export async function userRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const users = (signedIn: SignedIn) =>
    new UserService(deps.store, signedIn.actor, deps.publicUrl, deps.clock);

  async function usersPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) {
    return UsersPage({
      page: pageContext(request, reply),
      users: (await users(signedIn).list()).map(userView),
      operator: signedIn.user.account.kind === 'operator',
      ...(problem && { problem }),
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
      (problem) => usersPage(request, reply, signedIn, problem),
    );
    if (refused || !invited) return reply;
    return sendPage(reply, InvitationPage({ page: pageContext(request, reply), ...invited }), 201);
  });
}
