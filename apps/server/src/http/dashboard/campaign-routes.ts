import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from '../../domain/lifecycle.js';
import { CampaignService } from '../../services/campaigns.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { CampaignsPage, ReviewPage, type CampaignRow } from './pages/campaigns.js';
import { ErrorPage } from './pages/layout.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** Campaigns and their lifecycle (D11), and the operator's review queue. */
export async function campaignRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const campaigns = (signedIn: SignedIn) => new CampaignService(deps.store, signedIn.actor, deps.clock);

  /** Campaigns the person may see (scoped by the service), with their advertisers' names. */
  async function rows(signedIn: SignedIn, status?: 'pending_review'): Promise<CampaignRow[]> {
    // Newest first; the campaign store pages in id order only, so the first 1,000 are turned around.
    const list = (await campaigns(signedIn).list(status ? { status } : {}, { limit: 1_000 })).reverse();
    const names = new Map<number, string>();
    for (const id of new Set(list.map((campaign) => campaign.advertiserId))) {
      names.set(id, (await deps.store.findAdvertiser(id))?.name ?? String(id));
    }
    return list.map((campaign) => ({ ...campaign, advertiserName: names.get(campaign.advertiserId)! }));
  }

  async function campaignsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) {
    return CampaignsPage({
      page: pageContext(request, reply),
      campaigns: await rows(signedIn),
      operator: signedIn.user.account.kind === 'operator',
      canChange: mayChange(signedIn.user.role),
      ...(problem && { problem }),
    });
  }

  async function reviewPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) {
    const campaigns = await rows(signedIn, 'pending_review');
    return ReviewPage({ page: pageContext(request, reply), campaigns, ...(problem && { problem }) });
  }

  app.get('/campaigns', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await campaignsPage(request, reply, signedIn));
  });

  app.get('/review', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    if (signedIn.user.account.kind !== 'operator') {
      const page = pageContext(request, reply);
      const message = 'the review queue is the operator’s: your campaigns are under Campaigns';
      return sendPage(reply, ErrorPage({ page, title: 'Not available', message }), 403);
    }
    return sendPage(reply, await reviewPage(request, reply, signedIn));
  });

  app.post('/campaigns/:id/:action', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const { id, action } = request.params as { id: string; action: string };
    const { reason } = formFields(request);
    const review = action === 'approve' || action === 'reject';
    const refused = await attempt(
      reply,
      async () => {
        const known = (CAMPAIGN_ACTIONS as readonly string[]).includes(action)
          ? (action as CampaignAction)
          : 'none';
        await campaigns(signedIn).act(/^\d{1,15}$/.test(id) ? Number(id) : 0, known, reason);
      },
      (problem) =>
        review
          ? reviewPage(request, reply, signedIn, problem)
          : campaignsPage(request, reply, signedIn, problem),
    );
    if (refused) return reply;
    deps.afterChange();
    return reply.redirect(review ? '/review' : '/campaigns', 303);
  });
}
