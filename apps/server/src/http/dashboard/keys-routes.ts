import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError } from '../../domain/errors.js';
import { keyView, PartnerService } from '../../services/partners.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { KeysPage, NewKeyPage } from './pages/keys.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

const NOT_A_PARTNER =
  "a partner's own people create its keys here; the operator creates one with placard keys create";

/** A partner's API keys: create (shown once), rotate, revoke; the operator sees every partner's. */
export async function keyRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const partners = (signedIn: SignedIn) => new PartnerService(deps.store, signedIn.actor, deps.clock);
  const ownPartner = (signedIn: SignedIn) =>
    signedIn.user.account.kind === 'partner' ? signedIn.user.account.id : undefined;

  async function keysPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) {
    const service = partners(signedIn);
    const names = new Map((await service.listPartners()).map((partner) => [partner.id, partner.name]));
    const now = deps.clock();
    const keys = (await service.listKeys()).map((key) => ({
      ...keyView(key, now),
      partnerName: names.get(key.partnerId) ?? String(key.partnerId),
    }));
    return KeysPage({
      page: pageContext(request, reply),
      keys: keys.reverse(), // newest first
      partnerId: ownPartner(signedIn),
      canChange: mayChange(signedIn.user.role),
      ...(problem && { problem }),
    });
  }

  app.get('/keys', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await keysPage(request, reply, signedIn));
  });

  app.post('/keys', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const { label } = formFields(request);
    let created: Awaited<ReturnType<PartnerService['createKey']>> | undefined;
    const refused = await attempt(
      reply,
      async () => {
        const partnerId = ownPartner(signedIn);
        if (partnerId === undefined) throw new DomainError('forbidden', NOT_A_PARTNER);
        created = await partners(signedIn).createKey(partnerId, label?.trim() || null);
      },
      (problem) => keysPage(request, reply, signedIn, problem),
    );
    if (refused || !created) return reply;
    deps.afterChange();
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      NewKeyPage({ page, plaintext: created.plaintext, prefix: created.key.displayPrefix }),
      201,
    );
  });

  app.post('/keys/:id/rotate', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    let rotated: Awaited<ReturnType<PartnerService['rotateKey']>> | undefined;
    const refused = await attempt(
      reply,
      async () => {
        rotated = await partners(signedIn).rotateKey(keyId(request));
      },
      (problem) => keysPage(request, reply, signedIn, problem),
    );
    if (refused || !rotated) return reply;
    deps.afterChange();
    const page = pageContext(request, reply);
    const shown = { page, plaintext: rotated.plaintext, prefix: rotated.key.displayPrefix };
    return sendPage(reply, NewKeyPage({ ...shown, rotatedFrom: rotated.previous.displayPrefix }), 201);
  });

  app.post('/keys/:id/revoke', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const refused = await attempt(
      reply,
      async () => {
        await partners(signedIn).revokeKey(keyId(request));
      },
      (problem) => keysPage(request, reply, signedIn, problem),
    );
    if (refused) return reply;
    deps.afterChange();
    return reply.redirect('/keys', 303);
  });
}

/** The key id in the path; anything but digits names no key. */
function keyId(request: FastifyRequest): number {
  const { id } = request.params as { id: string };
  return /^\d{1,15}$/.test(id) ? Number(id) : 0;
}
