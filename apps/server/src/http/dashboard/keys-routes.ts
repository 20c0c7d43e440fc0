import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError } from '../../domain/errors.js';
import { keyView, PartnerService } from '../../services/partners.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { KeysPage, NewKeyPage } from './pages/keys.js';
import { sendPage } from './render.js';
import { idParam, pageWithForms, refusal, type RenderPage } from './page-routes.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

const NOT_A_PARTNER =
  "a partner's own people create its keys here; the operator creates one with placard keys create";

/**
 * A partner's API keys: create (shown once), rotate, revoke; the operator sees every partner's,
 * and suspends (with a reason the partner reads) and reinstates them.
 */
export async function keyRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const partners = (signedIn: SignedIn) => new PartnerService(deps.store, signedIn.actor, deps.clock);
  const ownPartner = (signedIn: SignedIn) =>
    signedIn.user.account.kind === 'partner' ? signedIn.user.account.id : undefined;

  const keysPage: RenderPage = async (request, reply, signedIn, refused) => {
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
      refused,
    });
  };

  const form = pageWithForms(app, deps, '/keys', keysPage);
  form('/keys/:id/revoke', (signedIn, _fields, params) => partners(signedIn).revokeKey(idParam(params)));
  // Suspending and reinstating are the operator's; the service refuses anyone else (403).
  form('/keys/:id/suspend', (signedIn, fields, params) =>
    partners(signedIn).suspendKey(idParam(params), fields['reason'] ?? ''),
  );
  form('/keys/:id/reinstate', (signedIn, _fields, params) =>
    partners(signedIn).reinstateKey(idParam(params)),
  );

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
      (problem) => keysPage(request, reply, signedIn, refusal(request, problem)),
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
        rotated = await partners(signedIn).rotateKey(idParam(request.params as Record<string, string>));
      },
      (problem) => keysPage(request, reply, signedIn, refusal(request, problem)),
    );
    if (refused || !rotated) return reply;
    deps.afterChange();
    const page = pageContext(request, reply);
    const shown = { page, plaintext: rotated.plaintext, prefix: rotated.key.displayPrefix };
    return sendPage(reply, NewKeyPage({ ...shown, rotatedFrom: rotated.previous.displayPrefix }), 201);
  });
}
