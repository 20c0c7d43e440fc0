import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { invalidField } from '../../domain/errors.js';
import { readMoney, type Micros } from '../../domain/money.js';
import { advertiserPricingText } from '../../domain/prices.js';
import { setFlash } from './cookies.js';
import type { Refused } from './pages/layout.js';
import { AdvertiserBudgetPage } from './pages/advertiser-budget.js';
import { sendPage } from './render.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { idParam, pageWithForms, refusal, type RenderPage } from './page-routes.js';
import { pageAsked, pagingOf } from './paging.js';
import { AdvertisersPage } from './pages/advertisers.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** A budget as the form gave it: empty for none, else read exactly from units of the currency. */
function budgetAmount(fields: Record<string, string>, name: string): Micros | null {
  const text = fields[name]?.trim() ?? '';
  if (text === '' || text.toLowerCase() === 'none') return null;
  const read = readMoney(text);
  if ('problem' in read) throw invalidField(name, read.problem);
  if (read.micros === 0) throw invalidField(name, 'must be more than 0: leave it empty for none');
  return read.micros;
}

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
      currency: deps.services.currency,
      canChange: signedIn.user.account.kind === 'operator' && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, '/advertisers', advertisersPage);

  // An advertiser's budgets (D18): the operator's people and the advertiser's own set them.
  const budgetPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) => {
    const service = advertisers(signedIn);
    const advertiser = await service.get(idParam(request.params as Record<string, string>, 'advertiser'));
    return AdvertiserBudgetPage({
      page: pageContext(request, reply),
      advertiser,
      spend: await service.spend(advertiser.id),
      currency: deps.services.currency,
      billingTimeZone: deps.services.billingTimeZone,
      canChange: mayChange(signedIn.user.role),
      refused,
    });
  };
  app.get('/advertisers/:id/budget', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await budgetPage(request, reply, signedIn));
  });
  app.post('/advertisers/:id/budget', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const id = idParam(request.params as Record<string, string>, 'advertiser');
    const fields = formFields(request);
    const refused = await attempt(
      reply,
      async () => {
        await advertisers(signedIn).setBudget(id, {
          totalMicros: budgetAmount(fields, 'budgetTotal'),
          monthlyMicros: budgetAmount(fields, 'budgetMonthly'),
        });
        setFlash(reply, 'the budgets are set');
      },
      (problem, problems) => budgetPage(request, reply, signedIn, refusal(request, problem, problems)),
    );
    if (refused) return reply;
    return reply.redirect(`/advertisers/${id}/budget`, 303);
  });
  form('/advertisers', (signedIn, fields) => advertisers(signedIn).create(fields['name'] ?? ''));
  form('/advertisers/:id', (signedIn, fields, params) =>
    advertisers(signedIn).rename(idParam(params, 'advertiser'), fields['name'] ?? ''),
  );
  // Who sets its campaigns' prices (D18): the operator's to decide.
  form(
    '/advertisers/:id/pricing',
    (signedIn, fields, params) =>
      advertisers(signedIn).setPricing(idParam(params, 'advertiser'), fields['pricing'] ?? ''),
    (advertiser) =>
      `the prices of ${advertiser.name}’s campaigns are set by ${advertiserPricingText(advertiser.pricing)}`,
  );
}
