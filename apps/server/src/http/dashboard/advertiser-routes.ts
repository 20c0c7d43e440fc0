import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { AdvertiserService } from '../../services/advertisers.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { continuesFrom, idParam, onePage, pageWithForms, type RenderPage } from './page-routes.js';
import { AdvertisersPage } from './pages/advertisers.js';
import { pageContext } from './support.js';

/** Advertisers in one page of the list. */
const PAGE_SIZE = 100;

/** The advertisers, with their number of campaigns, for the operator: create and rename. */
export async function advertiserRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const advertisers = (signedIn: SignedIn) => new AdvertiserService(deps.store, signedIn.actor, deps.clock);

  const advertisersPage: RenderPage = async (request, reply, signedIn, refused) => {
    const service = advertisers(signedIn);
    const after = continuesFrom(request, 'after');
    const { rows, next } = onePage(
      await service.list({ ...(after !== undefined && { after }), limit: PAGE_SIZE + 1 }),
      PAGE_SIZE,
    );
    const counts = await service.campaignCounts(rows.map((advertiser) => advertiser.id));
    return AdvertisersPage({
      page: pageContext(request, reply),
      advertisers: rows.map((advertiser) => ({ ...advertiser, campaigns: counts.get(advertiser.id) ?? 0 })),
      moreAfter: next,
      continued: after !== undefined,
      canChange: signedIn.user.account.kind === 'operator' && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, deps, '/advertisers', advertisersPage);
  form('/advertisers', (signedIn, fields) => advertisers(signedIn).create(fields['name'] ?? ''));
  form('/advertisers/:id', (signedIn, fields, params) =>
    advertisers(signedIn).rename(idParam(params), fields['name'] ?? ''),
  );
}
