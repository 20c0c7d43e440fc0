import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import type { Campaign } from '../../domain/campaigns.js';
import { DomainError } from '../../domain/errors.js';
import { instantOfLocalTime, isTimeZone, localPeriod } from '../../domain/time-zones.js';
import { notServingReasons } from '../../domain/serving-reasons.js';
import { changesSinceApproval, type FieldChange } from '../../services/campaign-review.js';
import { PacingPlanner } from '../../services/pacing-job.js';
import { PlacementService } from '../../services/placements.js';
import { whenIn } from './pages/format.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from '../../domain/lifecycle.js';
import { CampaignService } from '../../services/campaigns.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { CampaignsPage, ReviewPage, type CampaignRow } from './pages/campaigns.js';
import { CampaignFormPage, CampaignPreviewPage, type CampaignFormValues } from './pages/campaign-form.js';
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
      canCreate: signedIn.user.account.kind === 'advertiser' && mayChange(signedIn.user.role),
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
    const changes = new Map<number, FieldChange[] | null>();
    for (const campaign of campaigns)
      changes.set(campaign.id, await changesSinceApproval(deps.store, signedIn.actor, campaign.id));
    return ReviewPage({ page: pageContext(request, reply), campaigns, changes, ...(problem && { problem }) });
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

  /** The advertiser the person creates campaigns for: their own (the operator imports instead). */
  function ownAdvertiser(signedIn: SignedIn): number {
    if (signedIn.user.account.kind !== 'advertiser') throw new DomainError('forbidden', NOT_AN_ADVERTISER);
    return signedIn.user.account.id;
  }

  /** The form for a new campaign (`editing` undefined) or for a change to one. */
  async function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    values: CampaignFormValues,
    editing?: Campaign,
    problem?: string,
  ) {
    const placements = (await new PlacementService(deps.store, signedIn.actor).list()).filter(
      (placement) => placement.enabled || editing?.placements.includes(placement.id),
    );
    const form = editing
      ? {
          title: `Edit: ${editing.title}`,
          action: `/campaigns/${editing.id}/edit`,
          submitLabel: 'Save changes',
          note: EDIT_NOTE,
        }
      : { title: 'New campaign', action: '/campaigns/new', submitLabel: 'Save draft and preview' };
    return CampaignFormPage({
      page: pageContext(request, reply),
      ...form,
      placements,
      values,
      ...(problem && { problem }),
    });
  }

  app.get('/campaigns/new', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    ownAdvertiser(signedIn);
    return sendPage(reply, await formPage(request, reply, signedIn, {}));
  });

  app.post('/campaigns/new', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const values = campaignFormValues(request);
    let created: Campaign | undefined;
    const refused = await attempt(
      reply,
      async () => {
        created = await campaigns(signedIn).create(ownAdvertiser(signedIn), campaignInput(values));
      },
      (problem) => formPage(request, reply, signedIn, values, undefined, problem),
    );
    if (refused || !created) return reply;
    return reply.redirect(`/campaigns/${created.id}`, 303);
  });

  app.get('/campaigns/:id', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const campaign = await campaigns(signedIn).get(campaignId(request));
    const canChange = mayChange(signedIn.user.role);
    const enabled = (await new PlacementService(deps.store, signedIn.actor).list()).filter((p) => p.enabled);
    const now = deps.clock();
    const heldByPacing =
      campaign.pacing === 'even' &&
      campaign.status === 'running' &&
      (await new PacingPlanner(deps.store).paceOf(campaign, now)).held;
    const notServing = notServingReasons(
      campaign,
      now,
      new Set(enabled.map((placement) => placement.id)),
      (ms) => whenIn(ms, campaign.timeZone),
      heldByPacing,
    );
    const canEdit = canChange && !FINAL.includes(campaign.status);
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      CampaignPreviewPage({ page, campaign, canSubmit: canChange, canEdit, notServing }),
    );
  });

  app.get('/campaigns/:id/edit', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const campaign = await campaigns(signedIn).get(campaignId(request));
    return sendPage(reply, await formPage(request, reply, signedIn, formValuesOf(campaign), campaign));
  });

  app.post('/campaigns/:id/edit', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const values = campaignFormValues(request);
    const id = campaignId(request);
    const refused = await attempt(
      reply,
      async () => {
        await campaigns(signedIn).update(id, campaignInput(values));
      },
      async (problem) =>
        formPage(request, reply, signedIn, values, await campaigns(signedIn).get(id), problem),
    );
    if (refused) return reply;
    deps.afterChange();
    return reply.redirect(`/campaigns/${id}`, 303);
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

/** Statuses no edit applies to: the campaign's delivery is over. */
const FINAL: readonly string[] = ['completed', 'archived'];

const EDIT_NOTE =
  'Changing the title, description, category or destination of an approved campaign sends it back to review; a rejected campaign returns to draft.';

/** The campaign id in the path; anything but digits names no campaign. */
function campaignId(request: FastifyRequest): number {
  const { id } = request.params as { id: string };
  return /^\d{1,15}$/.test(id) ? Number(id) : 0;
}

/** A campaign's fields as the form shows them: times on the wall clock of its own time zone. */
function formValuesOf(campaign: Campaign): CampaignFormValues {
  const local = (ms: number | null) =>
    ms === null ? '' : localPeriod(ms, 'minute', campaign.timeZone).slice(0, 16);
  const number = (value: number | null) => (value === null ? '' : String(value));
  return {
    title: campaign.title,
    description: campaign.description ?? '',
    category: campaign.category ?? '',
    destinationUrl: campaign.destinationUrl,
    placements: campaign.placements,
    countries: campaign.countries.join(', '),
    devices: campaign.devices,
    timeZone: campaign.timeZone,
    startAt: local(campaign.startAt),
    endAt: local(campaign.endAt),
    impressionsDaily: number(campaign.caps.impressionsDaily),
    clicksDaily: number(campaign.caps.clicksDaily),
    impressionsTotal: number(campaign.caps.impressionsTotal),
    clicksTotal: number(campaign.caps.clicksTotal),
    pacing: campaign.pacing,
  };
}

const NOT_AN_ADVERTISER =
  "an advertiser's own people create its campaigns here; the operator imports them with placard campaigns import";

/** The form's fields as typed, lists included (a checkbox list arrives as one value or several). */
function campaignFormValues(request: FastifyRequest): CampaignFormValues {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const list = (name: string) => {
    const value = body[name];
    return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
      (item): item is string => typeof item === 'string',
    );
  };
  const text = formFields(request);
  return { ...text, placements: list('placements'), devices: list('devices') };
}

/** The form's values as the campaign fields the service validates (its messages name these fields). */
function campaignInput(values: CampaignFormValues): Record<string, unknown> {
  const optional = (value: string | undefined) =>
    value === undefined || value.trim() === '' ? null : value.trim();
  const timeZone = optional(values.timeZone) ?? 'UTC';
  const instant = (field: 'startAt' | 'endAt') => {
    const local = optional(values[field]);
    if (local === null) return null;
    const at = isTimeZone(timeZone) ? instantOfLocalTime(local, timeZone) : undefined;
    // Left as typed when it cannot be read, so the service names the field in its answer.
    return at === undefined ? local : new Date(at).toISOString();
  };
  const cap = (value: string | undefined) => {
    const given = optional(value);
    return given === null ? null : Number(given);
  };
  return {
    title: values.title ?? '',
    description: optional(values.description),
    category: optional(values.category),
    destinationUrl: values.destinationUrl ?? '',
    placements: values.placements ?? [],
    countries: (values.countries ?? '')
      .split(',')
      .map((code) => code.trim())
      .filter((code) => code !== ''),
    devices: values.devices ?? [],
    timeZone,
    startAt: instant('startAt'),
    endAt: instant('endAt'),
    caps: {
      impressionsDaily: cap(values.impressionsDaily),
      clicksDaily: cap(values.clicksDaily),
      impressionsTotal: cap(values.impressionsTotal),
      clicksTotal: cap(values.clicksTotal),
    },
    pacing: optional(values.pacing) ?? 'asap',
  };
}
