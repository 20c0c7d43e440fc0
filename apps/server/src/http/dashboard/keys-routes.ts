import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError } from '../../domain/errors.js';
import { keyCreationHold, keyView, type PartnerService } from '../../services/partners.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { KeysPage, NewKeyPage } from './pages/keys.js';
import { sendPage } from './render.js';
import { idParam, pageWithForms, refusal, type RenderPage } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

const LIMIT_NAMES = ['fetchRate', 'fetchBurst', 'eventsRate', 'eventsBurst'] as const;

/**
 * The rate limit form's fields as the service takes them: blank is null (the default), a whole
 * number is that number, anything else goes as typed so the service names the field it refuses.
 * A field the form did not send keeps the key's value.
 */
function limitsOf(fields: Record<string, string>): Record<string, unknown> {
  const limits: Record<string, unknown> = {};
  for (const name of LIMIT_NAMES) {
    const value = fields[name]?.trim();
    if (value === undefined) continue;
    limits[name] = value === '' ? null : /^\d{1,9}$/.test(value) ? Number(value) : value;
  }
  return limits;
}

const NOT_A_PARTNER =
  "a partner's own people create its keys here; the operator creates one with placard keys create";

/**
 * A partner's API keys: create (shown once), rotate, revoke; the operator sees every partner's,
 * and suspends (with a reason the partner reads) and reinstates them.
 */
export async function keyRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const partners = (signedIn: SignedIn) => deps.services.partners(signedIn.actor);
  const ownPartner = (signedIn: SignedIn) =>
    signedIn.user.account.kind === 'partner' ? signedIn.user.account.id : undefined;

  const keysPage: RenderPage = async (request, reply, signedIn, refused) => {
    const service = partners(signedIn);
    const names = new Map((await service.listPartners()).map((partner) => [partner.id, partner.name]));
    const now = deps.clock();
    const asked = pageAsked(request);
    const found = await service.keyPage(asked);
    const keys = found.rows.map((key) => ({
      ...keyView(key, now),
      partnerName: names.get(key.partnerId) ?? String(key.partnerId),
    }));
    return KeysPage({
      page: pageContext(request, reply),
      keys,
      paging: pagingOf(request, '/keys', asked, found),
      partnerId: ownPartner(signedIn),
      // The partner's people read why they cannot create a key instead of a form the service
      // refuses: any of the partner's keys may hold it, not only this page's.
      creationHold:
        ownPartner(signedIn) === undefined ? undefined : keyCreationHold(await service.listKeys()),
      canChange: mayChange(signedIn.user.role),
      refused,
      // A partner starts here: what it earned this month and last, beside its keys.
      ...(ownPartner(signedIn) !== undefined && {
        earnings: await deps.services.moneySummary(signedIn.actor).partnerEarnings(),
      }),
    });
  };

  const form = pageWithForms(app, '/keys', keysPage);
  form(
    '/keys/:id/revoke',
    (signedIn, _fields, params) => partners(signedIn).revokeKey(idParam(params, 'api key')),
    (key) => `Key ${key.displayPrefix}… revoked: every request with it is refused within 2 seconds.`,
  );
  // Suspending and reinstating are the operator's; the service refuses anyone else (403).
  form('/keys/:id/suspend', (signedIn, fields, params) =>
    partners(signedIn).suspendKey(idParam(params, 'api key'), fields['reason'] ?? ''),
  );
  form('/keys/:id/reinstate', (signedIn, _fields, params) =>
    partners(signedIn).reinstateKey(idParam(params, 'api key')),
  );
  // The operator's too (D7): the same change as PUT /admin/v1/keys/:id/rate-limits.
  form('/keys/:id/rate-limits', (signedIn, fields, params) =>
    partners(signedIn).setKeyLimits(idParam(params, 'api key'), limitsOf(fields)),
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
      (problem, problems) => keysPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused || !created) return reply;
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
        rotated = await partners(signedIn).rotateKey(
          idParam(request.params as Record<string, string>, 'api key'),
        );
      },
      (problem, problems) => keysPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused || !rotated) return reply;
    const page = pageContext(request, reply);
    const shown = { page, plaintext: rotated.plaintext, prefix: rotated.key.displayPrefix };
    return sendPage(reply, NewKeyPage({ ...shown, rotatedFrom: rotated.previous.displayPrefix }), 201);
  });
}
