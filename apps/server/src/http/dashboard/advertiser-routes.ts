import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { idParam, pageWithForms, type RenderPage } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import { AdvertisersPage } from './pages/advertisers.js';
import { pageContext } from './support.js';

/** The advertisers, with their number of campaigns, for the operator: create and rename. */
export async function advertiserRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const advertisers = (signedIn: SignedIn) => deps.services.advertisers(signedIn.actor);

  const advertisersPage: RenderPage = async (request, reply, signedIn, refused) => {
    const service = advertisers(signedIn);
    const asked = pageAsked(request);
    const found = await service.page(asked);
    const counts = await service.campaignCounts(found.rows.map((advertiser) => advertiser.id));
    return AdvertisersPage({
      page: pageContext(request, reply),
      advertisers: found.rows.map((advertiser) => ({
        ...advertiser,
        campaigns: counts.get(advertiser.id) ?? 0,
      })),
      paging: pagingOf(request, '/advertisers', asked, found),
      canChange: signedIn.user.account.kind === 'operator' && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, '/advertisers', advertisersPage);
  form('/advertisers', (signedIn, fields) => advertisers(signedIn).create(fields['name'] ?? ''));
  form('/advertisers/:id', (signedIn, fields, params) =>
    advertisers(signedIn).rename(idParam(params, 'advertiser'), fields['name'] ?? ''),
  );
}
