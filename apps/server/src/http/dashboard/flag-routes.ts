import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { flaggedKeyIds, flagView } from '../../services/key-flags.js';
import type { SignedIn } from '../../services/sessions.js';
import type { KeyFlagRecord } from '../../store/store.js';
import type { DashboardDeps } from './context.js';
import { idParam, pageWithForms, type RenderPage } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import { FlagsPage, type FlagRow } from './pages/flags.js';
import { pageContext } from './support.js';

const NOT_YOURS = 'flags are about partners’ keys: the operator and each partner see them';

/** The query parameter that pages the reviewed flags, below the open ones (paged by `?page=`). */
const REVIEWED_PAGE = 'reviewed';

/**
 * Key flags (D15): the operator's queue (dismiss, or suspend the key), a partner's own flags and
 * its traffic not billed today by reason. The same services as the management API, as the person.
 */
export async function flagRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const flags = (signedIn: SignedIn) => deps.services.keyFlags(signedIn.actor);

  const flagsPage: RenderPage = async (request, reply, signedIn, refused) => {
    const kind = signedIn.user.account.kind;
    // An advertiser's people have no flags page; a form of theirs naming a flag was refused as a
    // missing flag (no partner's flag is theirs to see), and answers so.
    if (kind === 'advertiser')
      throw refused ? notFound(refused.problem) : new DomainError('forbidden', NOT_YOURS);
    const service = flags(signedIn);
    const partners = deps.services.partners(signedIn.actor);
    const names = new Map((await partners.listPartners()).map((partner) => [partner.id, partner.name]));
    const prefixes = new Map((await partners.listKeys()).map((key) => [key.id, key.displayPrefix]));
    const prefix = (id: number) => prefixes.get(id) ?? `key ${id}`;
    const row = (flag: KeyFlagRecord): FlagRow => ({
      ...flagView(flag),
      keyPrefix: prefix(flag.apiKeyId),
      keyPrefixes: flaggedKeyIds(flag).map(prefix),
      partnerName: names.get(flag.partnerId) ?? String(flag.partnerId),
    });
    const asked = pageAsked(request);
    const openPage = await service.openPage(asked);
    const open = openPage.rows.map(row);
    const reviewedAsked = pageAsked(request, REVIEWED_PAGE);
    const reviewedPage = await service.reviewedPage(reviewedAsked);
    let reasons;
    if (kind === 'partner') {
      const figures = await deps.services.liveFigures(signedIn.actor, {
        window: 'day',
        timeZone: 'UTC',
        breakdown: 'reason',
      });
      reasons = {
        rows: figures.breakdown
          .filter((value) => value.value !== null && value.value !== '')
          .map((value) => ({ reason: String(value.value), counts: value.counts })),
        impressions: figures.totals.impressions + figures.totals.nonBillableImpressions,
        clicks: figures.totals.clicks + figures.totals.nonBillableClicks,
      };
    }
    return FlagsPage({
      page: pageContext(request, reply),
      operator: kind === 'operator',
      canReview: kind === 'operator' && mayChange(signedIn.user.role),
      open,
      openPaging: pagingOf(request, '/flags', asked, openPage),
      reviewed: reviewedPage.rows.map(row),
      reviewedPaging: pagingOf(request, '/flags', reviewedAsked, reviewedPage, REVIEWED_PAGE),
      ...(reasons && { reasons }),
      refused,
    });
  };

  const form = pageWithForms(app, '/flags', flagsPage);
  // Reviews are the operator's; the service refuses anyone else (403) and hides other partners' flags (404).
  form('/flags/:id/dismiss', (signedIn, fields, params) =>
    flags(signedIn).dismiss(idParam(params, 'flag'), fields['note'] ?? ''),
  );
  form('/flags/:id/suspend', (signedIn, fields, params) =>
    flags(signedIn).suspend(idParam(params, 'flag'), fields['reason'] ?? ''),
  );
}
