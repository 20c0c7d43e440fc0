import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError, invalidField } from '../../domain/errors.js';
import { readSharePercent } from '../../domain/revenue-shares.js';
import { keyStatus, keyView } from '../../services/partners.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { setFlash } from './cookies.js';
import type { Refused } from './pages/layout.js';
import { pageWithForms, refusal, type RenderPage } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import { IntegrationPage } from './pages/integration.js';
import { PartnerBlocksPage } from './pages/partner-blocks.js';
import { PartnersPage } from './pages/partners.js';
import { RevenueSharesPage } from './pages/revenue-shares.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

const NOT_A_PARTNER = 'the integration page is a partner’s: it shows its own keys and commands';

/** The placement the integration page's commands use unless the partner picks another. */
const FIRST_CHOICE = 'header_banner';

/** `politics, health` as typed in a form: the list the service checks, word by word. */
const categories = (text: string | undefined): string[] =>
  (text ?? '').split(/[\s,]+/).filter((word) => word !== '');

/**
 * Partners for the operator (create, blocked categories), what each partner blocks, and each
 * partner's integration page.
 */
export async function partnerRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const partners = (signedIn: SignedIn) => deps.services.partners(signedIn.actor);

  const partnersPage: RenderPage = async (request, reply, signedIn, refused) => {
    const service = partners(signedIn);
    const now = deps.clock();
    const active = new Map<number, number>();
    for (const key of await service.listKeys()) {
      if (keyStatus(key, now) === 'active') active.set(key.partnerId, (active.get(key.partnerId) ?? 0) + 1);
    }
    const asked = pageAsked(request);
    const found = await service.partnerPage(asked);
    const rows = found.rows.map((partner) => ({ ...partner, activeKeys: active.get(partner.id) ?? 0 }));
    return PartnersPage({
      page: pageContext(request, reply),
      partners: rows,
      paging: pagingOf(request, '/partners', asked, found),
      canChange: signedIn.user.account.kind === 'operator' && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, '/partners', partnersPage);
  form('/partners', (signedIn, fields) =>
    partners(signedIn).createPartner(fields['name'] ?? '', categories(fields['blockedCategories'])),
  );
  form('/partners/:id', (signedIn, fields, params) =>
    partners(signedIn).updatePartner(params['id'] ?? '', {
      blockedCategories: categories(fields['blockedCategories']),
    }),
  );

  // A partner's revenue shares: the operator's people set them, the partner's own read them.
  const sharesPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) => {
    const ref = (request.params as { id: string }).id;
    const partner = await partners(signedIn).findPartner(ref);
    const service = deps.services.revenueShares(signedIn.actor);
    const shares = await service.list(partner.id);
    const operator = signedIn.user.account.kind === 'operator';
    // Who set each share, in words, for the operator's people; a partner's read "the operator".
    const names = operator
      ? await deps.services.auditActorNames(
          signedIn.actor,
          shares.map((share) => share.setBy),
        )
      : new Map<string, string>();
    const now = deps.clock();
    return RevenueSharesPage({
      page: pageContext(request, reply),
      partner,
      shares: shares.map((share) => ({ ...share, setByName: names.get(share.setBy) ?? 'the operator' })),
      today: service.today(),
      billingTimeZone: service.billingTimeZone,
      current: shares.find((share) => Date.parse(share.effectiveFrom) <= now),
      canChange: operator && mayChange(signedIn.user.role),
      refused,
    });
  };
  app.get('/partners/:id/revenue-shares', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await sharesPage(request, reply, signedIn));
  });
  app.post('/partners/:id/revenue-shares', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const ref = (request.params as { id: string }).id;
    const fields = formFields(request);
    const refused = await attempt(
      reply,
      async () => {
        const service = deps.services.revenueShares(signedIn.actor);
        // Scope first, as the service checks it: a partner's people are refused whatever they typed.
        await service.list(ref);
        const read = readSharePercent(fields['percent'] ?? '');
        if ('problem' in read) throw invalidField('percent', read.problem);
        await service.set(ref, {
          basisPoints: read.basisPoints,
          effectiveDate: fields['effectiveDate']?.trim(),
        });
        setFlash(
          reply,
          `the revenue share is set: ${fields['percent']?.trim()}% from ${fields['effectiveDate']?.trim()}`,
        );
      },
      (problem, problems) => sharesPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused) return reply;
    return reply.redirect(`/partners/${ref}/revenue-shares`, 303);
  });

  // What a partner blocks: its own people and the operator's block and unblock advertisers.
  const blocksPage: RenderPage = async (request, reply, signedIn, refused) => {
    const ref = (request.params as { id: string }).id;
    const { partner, blocked, choices } = await partners(signedIn).blockableAdvertisers(ref);
    return PartnerBlocksPage({
      page: pageContext(request, reply),
      partner,
      blocked,
      choices,
      operator: signedIn.user.account.kind === 'operator',
      canChange: mayChange(signedIn.user.role),
      refused,
    });
  };
  app.get('/partners/:id/blocks', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await blocksPage(request, reply, signedIn));
  });
  /** A form that blocks (`/partners/:id/blocks`) or unblocks (`…/unblock`) one advertiser. */
  const blockForm = (action: string, field: string, blocking: boolean) =>
    app.post(action, PAGE, async (request, reply) => {
      const signedIn = requireSignedIn(request, reply)!;
      const ref = (request.params as { id: string }).id;
      const typed = (formFields(request)[field] ?? '').trim();
      const refused = await attempt(
        reply,
        async () => {
          const service = partners(signedIn);
          const { blockedAdvertisers } = await service.findPartner(ref);
          // Digits are an id; anything else goes to the service as typed, which refuses it.
          const id = /^\d{1,15}$/.test(typed) ? Number(typed) : typed;
          const after = blocking
            ? [...blockedAdvertisers, id]
            : blockedAdvertisers.filter((blocked) => blocked !== id);
          await service.updatePartner(ref, { blockedAdvertisers: after });
          setFlash(reply, blocking ? 'the advertiser is blocked' : 'the advertiser is unblocked');
        },
        (problem, problems) => blocksPage(request, reply, signedIn, refusal(request, problem, problems)),
      );
      if (refused) return reply;
      return reply.redirect(`/partners/${ref}/blocks`, 303);
    });
  blockForm('/partners/:id/blocks', 'blockedAdvertisers', true);
  blockForm('/partners/:id/blocks/unblock', 'advertiserId', false);

  app.get('/integration', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    if (signedIn.user.account.kind !== 'partner') throw new DomainError('forbidden', NOT_A_PARTNER);
    const now = deps.clock();
    const keys = (await partners(signedIn).listKeys()).map((key) => keyView(key, now)).reverse();
    const placements = (await deps.services.placements(signedIn.actor).list())
      .filter((placement) => placement.enabled)
      .map(({ id, description }) => ({ id, description }));
    const asked = (request.query as Record<string, unknown>)['placement'];
    const ids = placements.map((placement) => placement.id);
    const placement = [asked, FIRST_CHOICE, ids[0]].find(
      (id): id is string => typeof id === 'string' && ids.includes(id),
    );
    const baseUrl = deps.publicUrl.replace(/\/+$/, '');
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      IntegrationPage({ page, baseUrl, keys, placements, placement, partnerId: signedIn.user.account.id }),
    );
  });
}
