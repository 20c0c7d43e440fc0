import {
  FREQUENCY_PERIODS,
  MAX_FREQUENCY_CAP,
  type FrequencyCap,
  type FrequencyPeriod,
} from '../../domain/frequency-caps.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import type { Campaign } from '../../domain/campaigns.js';
import { DomainError, invalidField, unprocessable, type FieldProblem } from '../../domain/errors.js';
import { readMoney, type Micros } from '../../domain/money.js';
import { formatPriceAmount, priceText } from '../../domain/prices.js';
import { idFromText } from '../../domain/ids.js';
import { instantOfLocalTime, isTimeZone, localPeriod } from '../../domain/time-zones.js';
import { notServingReasons } from '../../domain/serving-reasons.js';
import { hourRangesFromText, hourRangesText, WEEKDAYS, type Schedule } from '../../domain/schedules.js';
import type { FieldChange } from '../../services/campaign-review.js';
import { whenIn } from './pages/format.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from '../../domain/lifecycle.js';
import { campaignListView } from './campaign-list-query.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { setFlash } from './cookies.js';
import { campaignDone } from './done.js';
import { idOf, idOrNotFound } from './ids.js';
import { refusal } from './page-routes.js';
import type { Refused } from './pages/layout.js';
import { CampaignsPage, type CampaignRow } from './pages/campaigns.js';
import { ReviewPage } from './pages/review.js';
import {
  CampaignFormPage,
  CampaignPreviewPage,
  type CampaignFormValues,
  type CampaignPricing,
  SCHEDULE_FIELDS,
} from './pages/campaign-form.js';
import { sendPage } from './render.js';
import { pageAsked, pagingOf } from './paging.js';
import type { Paging } from './pages/parts.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/** Campaigns and their lifecycle (D11), and the operator's review queue. */
export async function campaignRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const campaigns = (signedIn: SignedIn) => deps.services.campaigns(signedIn.actor);

  /**
   * One page of the campaigns the person may see (scoped by the service), newest first, with
   * their advertisers' names, and the pager of the list at `path`.
   */
  async function rows(
    request: FastifyRequest,
    signedIn: SignedIn,
    path: string,
    status?: 'pending_review',
  ): Promise<{ campaigns: CampaignRow[]; paging: Paging }> {
    const asked = pageAsked(request);
    const page = await campaigns(signedIn).pageWithAdvertisers(status ? { status } : {}, asked);
    return { campaigns: page.rows, paging: pagingOf(request, path, asked, page) };
  }

  async function campaignsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    problem?: string,
  ) {
    const asked = pageAsked(request);
    const view = campaignListView(request);
    const { status, search, sort } = view;
    const list = deps.services.campaignList(signedIn.actor);
    const found = await list.page({ ...(status && { status }), ...(search && { search }) }, asked, sort);
    return CampaignsPage({
      page: pageContext(request, reply),
      rows: found.rows,
      // A form refused on another path pages the list at its own.
      paging: pagingOf(request, '/campaigns', asked, found),
      view,
      operator: signedIn.user.account.kind === 'operator',
      canChange: mayChange(signedIn.user.role),
      canCreate: signedIn.user.account.kind !== 'partner' && mayChange(signedIn.user.role),
      currency: deps.services.currency,
      ...(problem && { problem }),
    });
  }

  async function reviewPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    refused?: Refused,
  ) {
    const { campaigns, paging } = await rows(request, signedIn, '/review', 'pending_review');
    const changes = new Map<number, FieldChange[] | null>();
    for (const campaign of campaigns)
      changes.set(campaign.id, await deps.services.changesSinceApproval(signedIn.actor, campaign.id));
    return ReviewPage({
      page: pageContext(request, reply),
      campaigns,
      paging,
      changes,
      currency: deps.services.currency,
      ...(refused && { problem: refused.problem, refused }),
    });
  }

  app.get('/campaigns', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await campaignsPage(request, reply, signedIn));
  });

  app.get('/review', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await reviewPage(request, reply, signedIn));
  });

  /**
   * The advertiser a new campaign is for: the one the operator chose in the form, or the person's
   * own (the service refuses an advertiser the person may not see as not found).
   */
  function advertiserOf(signedIn: SignedIn, values: CampaignFormValues): number {
    const account = signedIn.user.account;
    if (account.kind === 'advertiser') return account.id;
    if (account.kind !== 'operator') throw new DomainError('forbidden', NOT_AN_ADVERTISER);
    const chosen = idFromText(values.advertiserId ?? '');
    if (chosen === undefined) throw invalidField('advertiserId', 'is required: choose an advertiser');
    return chosen;
  }

  /** The form for a new campaign (`editing` undefined) or for a change to one. */
  async function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    values: CampaignFormValues,
    editing?: Campaign,
    problem?: string,
    problems?: readonly FieldProblem[],
  ) {
    const placements = (await deps.services.placements(signedIn.actor).list()).filter(
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
    const operator =
      signedIn.user.account.kind === 'operator'
        ? editing
          ? {}
          : {
              advertisers: await deps.services.advertisers(signedIn.actor).list({
                limit: ADVERTISER_CHOICES,
              }),
              advertiserChoices: ADVERTISER_CHOICES,
            }
        : undefined;
    // An advertiser's people set the price of a campaign of theirs where the operator allows it.
    const { account } = signedIn.user;
    const canPrice =
      account.kind === 'advertiser' && (await accountPrices(signedIn, editing?.advertiserId ?? account.id));
    return CampaignFormPage({
      page: pageContext(request, reply),
      ...form,
      placements,
      values,
      currency: deps.services.currency,
      price: editing?.price ?? null,
      canPrice,
      ...(operator && { operator }),
      ...(problem && { problem }),
      ...(problems && { problems }),
    });
  }

  app.get('/campaigns/new', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await formPage(request, reply, signedIn, {}));
  });

  app.post('/campaigns/new', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const values = campaignFormValues(request);
    let created: Campaign | undefined;
    const refused = await attempt(
      reply,
      async () => {
        created = await campaigns(signedIn).create(advertiserOf(signedIn, values), campaignInput(values));
      },
      (problem, problems) =>
        formPage(request, reply, signedIn, values, undefined, problem, formProblems(problems)),
    );
    if (refused || !created) return reply;
    return reply.redirect(`/campaigns/${created.id}`, 303);
  });

  /**
   * Whether the person's account may set the price of a campaign of this advertiser (D18): the
   * operator's, or the advertiser's own where the operator allows it (the service checks it again).
   */
  async function accountPrices(signedIn: SignedIn, advertiserId: number): Promise<boolean> {
    if (signedIn.user.account.kind === 'operator') return true;
    return (await deps.services.advertisers(signedIn.actor).get(advertiserId)).pricing === 'advertiser';
  }

  /** A campaign's own page; `priceForm`: its price form as just refused, with the service's problems. */
  async function previewPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signedIn: SignedIn,
    priceForm?: { values: CampaignFormValues; problem: string; problems: readonly FieldProblem[] },
  ) {
    const campaign = await campaigns(signedIn).get(campaignId(request));
    const canChange = mayChange(signedIn.user.role);
    const enabled = (await deps.services.placements(signedIn.actor).list()).filter((p) => p.enabled);
    const now = deps.clock();
    // As this instance's pacing job decided at its last step (D16).
    const pace = deps.paceOf(campaign.id);
    const pacingHold = campaign.pacing === 'even' && pace.held ? pace.hold : undefined;
    const notServing = notServingReasons(
      campaign,
      now,
      new Set(enabled.map((placement) => placement.id)),
      (ms) => whenIn(ms, campaign.timeZone),
      pacingHold,
    );
    const canEdit = canChange && !FINAL.includes(campaign.status);
    const page = pageContext(request, reply);
    const [prices, spend] = await Promise.all([
      campaigns(signedIn).prices(campaign.id),
      campaigns(signedIn).budgetSpend(campaign.id),
    ]);
    const { currency } = deps.services;
    const pricing: CampaignPricing = !(await accountPrices(signedIn, campaign.advertiserId))
      ? { by: 'operator' }
      : canEdit
        ? { by: 'you', ...(priceForm ?? { values: formValuesOf(campaign, currency) }) }
        : { by: 'reader' };
    return CampaignPreviewPage({
      page,
      campaign,
      canSubmit: canChange,
      canEdit,
      notServing,
      currency,
      prices,
      spend,
      pricing,
      ...(priceForm && pricing.by !== 'you' && { problem: priceForm.problem }),
    });
  }

  app.get('/campaigns/:id', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await previewPage(request, reply, signedIn));
  });

  // The price alone, from the campaign's page (D18): whoever may set it, as in the edit form.
  app.post('/campaigns/:id/price', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const values = campaignFormValues(request);
    const id = campaignId(request);
    const refused = await attempt(
      reply,
      async () => {
        const priced = await campaigns(signedIn).update(id, priceField(values));
        setFlash(
          reply,
          `the price of ${priced.title} is ${priceText(priced.price, deps.services.currency)} from now on`,
        );
      },
      (problem, problems) =>
        previewPage(request, reply, signedIn, { values, problem, problems: formProblems(problems) }),
    );
    if (refused) return reply;
    return reply.redirect(`/campaigns/${id}`, 303);
  });

  app.get('/campaigns/:id/edit', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const campaign = await campaigns(signedIn).get(campaignId(request));
    const values = formValuesOf(campaign, deps.services.currency);
    return sendPage(reply, await formPage(request, reply, signedIn, values, campaign));
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
      async (problem, problems) =>
        formPage(
          request,
          reply,
          signedIn,
          values,
          await campaigns(signedIn).get(id),
          problem,
          formProblems(problems),
        ),
    );
    if (refused) return reply;
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
        const done = await campaigns(signedIn).act(idOf(id, 'campaign'), known, reason);
        setFlash(reply, campaignDone(known, done.title));
      },
      (problem, problems) =>
        review
          ? reviewPage(request, reply, signedIn, refusal(request, problem, problems))
          : campaignsPage(request, reply, signedIn, problem),
    );
    if (refused) return reply;
    return reply.redirect(review ? '/review' : '/campaigns', 303);
  });
}

/** Advertisers the operator's form lists to choose from; with more, it asks for the id instead. */
const ADVERTISER_CHOICES = 1000;

/** Statuses no edit applies to: the campaign's delivery is over. */
const FINAL: readonly string[] = ['completed', 'archived'];

const EDIT_NOTE =
  'Changing the title, description, category or destination of an approved campaign sends it back to review; a rejected campaign returns to draft.';

/** The campaign id in the path; anything else is a 404 naming what was asked for. */
function campaignId(request: FastifyRequest): number {
  return idOrNotFound(request, 'campaign');
}

/**
 * A campaign's fields as the form shows them: times on the wall clock of its own time zone, its price
 * in units of `currency`, exactly.
 */
function formValuesOf(campaign: Campaign, currency: string): CampaignFormValues {
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
    ...frequencyFormValues(campaign.frequencyCaps),
    ...scheduleFormValues(campaign.schedule),
    priority: String(campaign.priority),
    weight: String(campaign.weight),
    priceModel: campaign.price?.model ?? '',
    priceAmount: campaign.price ? formatPriceAmount(campaign.price.amountMicros, currency) : '',
    budgetTotal: budgetText(campaign.budget.totalMicros, currency),
    budgetDaily: budgetText(campaign.budget.dailyMicros, currency),
  };
}

/** The form's field for each period's frequency cap (D20). */
const FREQUENCY_FIELDS = {
  hour: 'frequencyHour',
  day: 'frequencyDay',
  week: 'frequencyWeek',
} as const satisfies Record<FrequencyPeriod, keyof CampaignFormValues>;

/** A campaign's frequency caps as the form's three fields: each period's number, empty for none. */
function frequencyFormValues(caps: readonly FrequencyCap[]): CampaignFormValues {
  const values: CampaignFormValues = {};
  for (const cap of caps) values[FREQUENCY_FIELDS[cap.per]] = String(cap.impressions);
  return values;
}

/**
 * The frequency caps as the form gave them: one per filled period, in the API's form; a value that
 * is not a whole number in range is refused naming its field, before anything is saved.
 */
function frequencyCapsField(values: CampaignFormValues): { impressions: number; per: FrequencyPeriod }[] {
  const caps: { impressions: number; per: FrequencyPeriod }[] = [];
  const problems: FieldProblem[] = [];
  for (const per of FREQUENCY_PERIODS) {
    const field = FREQUENCY_FIELDS[per];
    const text = (values[field] ?? '').trim();
    if (text === '') continue;
    const impressions = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
    if (impressions >= 1 && impressions <= MAX_FREQUENCY_CAP) caps.push({ impressions, per });
    else problems.push({ field, message: `must be a whole number from 1 to ${MAX_FREQUENCY_CAP}` });
  }
  if (problems.length > 0) throw unprocessable('invalid campaign', problems);
  return caps;
}

/** The service's problems with a price under the form's names for its two fields. */
/** A schedule as the form's seven fields: each day's hour ranges (`9-17, 19-22`), empty for none. */
function scheduleFormValues(schedule: Schedule | null): CampaignFormValues {
  return Object.fromEntries(
    WEEKDAYS.map((day) => [SCHEDULE_FIELDS[day], hourRangesText(schedule?.[day] ?? [])]),
  );
}

/**
 * The schedule as the form gave it, in the API's form: null when every day is empty (every hour);
 * a day whose hours cannot be read is refused naming its field, before anything is saved. The
 * service checks the hours themselves and names the day (see `formProblems`).
 */
function scheduleField(values: CampaignFormValues): Record<string, number[][]> | null {
  const schedule: Record<string, number[][]> = {};
  const problems: FieldProblem[] = [];
  for (const day of WEEKDAYS) {
    const field = SCHEDULE_FIELDS[day];
    const text = (values[field] ?? '').trim();
    if (text === '') continue;
    const ranges = hourRangesFromText(text);
    if (ranges === undefined)
      problems.push({ field, message: 'must be hour ranges such as 9-17, or 0-6, 22-24; empty for none' });
    else schedule[day] = ranges;
  }
  if (problems.length > 0) throw unprocessable('invalid campaign', problems);
  return Object.keys(schedule).length === 0 ? null : schedule;
}

/** The service's problems with a price, budget or day's hours under the form's names for their fields. */
function formProblems(problems: readonly FieldProblem[]): FieldProblem[] {
  const FORM_NAMES: Record<string, string> = {
    price: 'priceModel',
    'price.model': 'priceModel',
    'price.amountMicros': 'priceAmount',
    'budget.totalMicros': 'budgetTotal',
    'budget.dailyMicros': 'budgetDaily',
  };
  const dayField = (field: string): string | undefined => {
    const day = WEEKDAYS.find((weekday) => field.startsWith(`schedule.${weekday}`));
    return day && SCHEDULE_FIELDS[day];
  };
  return problems.map((problem) => ({
    ...problem,
    field: FORM_NAMES[problem.field] ?? dayField(problem.field) ?? problem.field,
  }));
}

/**
 * The price as the form gave it (D18): left out when the form has none (that of an advertiser the
 * operator does not let price its campaigns), null for no model, else the model with the amount read exactly from units of the currency; an
 * amount that cannot be read is refused naming the field, before anything is saved.
 */
function priceField(values: CampaignFormValues): Record<string, unknown> {
  if (values.priceModel === undefined) return {};
  const model = values.priceModel.trim();
  if (model === '') return { price: null };
  const refused = (message: string) => unprocessable('invalid campaign', [{ field: 'priceAmount', message }]);
  const amount = readMoney(values.priceAmount ?? '');
  if ('problem' in amount) throw refused(amount.problem);
  if (amount.micros === 0) throw refused('must be more than 0: choose None for no price');
  return { price: { model, amountMicros: amount.micros } };
}

/** A budget in the form: its amount in units of the currency, exactly, or empty for none. */
const budgetText = (amount: Micros | null, currency: string): string =>
  amount === null ? '' : formatPriceAmount(amount, currency);

/**
 * The budgets as the form gave them (D18): each empty for none, else read exactly from units of the
 * currency; an amount that cannot be read is refused naming its field, before anything is saved.
 */
function budgetField(values: CampaignFormValues): Record<string, unknown> {
  const problems: FieldProblem[] = [];
  const amount = (text: string | undefined, field: 'budgetTotal' | 'budgetDaily') => {
    if (text === undefined || text.trim() === '') return null;
    const read = readMoney(text.trim());
    if ('problem' in read) problems.push({ field, message: read.problem });
    else if (read.micros === 0)
      problems.push({ field, message: 'must be more than 0: leave it empty for none' });
    else return read.micros;
    return null;
  };
  const budget = {
    totalMicros: amount(values.budgetTotal, 'budgetTotal'),
    dailyMicros: amount(values.budgetDaily, 'budgetDaily'),
  };
  if (problems.length > 0) throw unprocessable('invalid campaign', problems);
  return { budget };
}

const NOT_AN_ADVERTISER = "campaigns are created by an advertiser's own people or by the operator";

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
    frequencyCaps: frequencyCapsField(values),
    schedule: scheduleField(values),
    // Only the operator's form has them; posted by anyone else, the service refuses a change (403).
    ...operatorField('priority', values.priority),
    ...operatorField('weight', values.weight),
    ...priceField(values),
    ...budgetField(values),
  };
}

/**
 * A priority or weight as the form gave it: left out when the form has no such field (an
 * advertiser's), null (the default) when blank, a number when it reads as one, else as typed so the service names the field.
 */
function operatorField(name: 'priority' | 'weight', value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  const given = value.trim();
  if (given === '') return { [name]: null }; // the default
  return { [name]: /^-?\d{1,9}$/.test(given) ? Number(given) : given };
}
