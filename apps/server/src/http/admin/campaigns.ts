import { Type } from 'typebox';
import { CAMPAIGN_STATUSES, isCampaignStatus, type Campaign } from '../../domain/campaigns.js';
import { invalidField, unprocessable } from '../../domain/errors.js';
import { spendJson } from '../../domain/budget-forecast.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from '../../domain/lifecycle.js';
import { campaignRecord } from '../../services/campaigns.js';
import { IdParams, Instant, Nullable, NullableInstant, One } from '../openapi/common.js';
import {
  advertiserBudgetField,
  AdvertiserPricingField,
  campaignFields,
  operation,
  ref,
  Status,
} from '../openapi/management.js';
import type { Advertiser } from '../../store/store.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { isId, one, pageOf, pageRequest } from './support.js';
import { query, type ManagementApp } from './typed-routes.js';

const advertiserSchemas = recordSchemas('Advertisers', ref('Advertiser'));
const campaignSchemas = recordSchemas('Campaigns', ref('CampaignRecord'));

/** Why `explainCampaign` finds a campaign would not be returned, in the order it checks them. */
const WHY_CODES = [
  'status',
  'flight_ended',
  'flight_not_started',
  'outside_schedule',
  'daily_cap_reached',
  'advertiser_budget_spent',
  'pacing_ahead',
  'placements_disabled',
  'placement_not_targeted',
  'placement_disabled',
  'country_not_targeted',
  'device_not_targeted',
  'category_blocked',
  'advertiser_blocked',
];

/** What the serving explainer answers: the reasons against a campaign, or its chance in the draw. */
const Explanation = Type.Object({
  campaignId: Type.Integer(),
  eligible: Type.Boolean(),
  notes: Type.Array(Type.String(), {
    description:
      'What may still keep it from a particular fetch that the explainer does not see, in words: its frequency caps (D20), which apply per viewer, only to fetches and impressions that name one.',
  }),
  reasons: Type.Array(
    Type.Object({
      code: Type.Union(WHY_CODES.map((code) => Type.Literal(code))),
      message: Type.String(),
      status: Type.Optional(Status),
      rejectionReason: Type.Optional(Nullable(Type.String())),
      startAt: Type.Optional(NullableInstant),
      endAt: Type.Optional(Instant),
      schedule: Type.Optional(
        Type.String({ description: 'Its schedule in words, such as `mon-fri 9-17; sat 10-14`.' }),
      ),
      timeZone: Type.Optional(Type.String()),
      nextRunAt: Type.Optional(NullableInstant),
      cappedUntil: Type.Optional(Instant),
      budgetHeldUntil: Type.Optional(NullableInstant),
      placement: Type.Optional(Type.String()),
      placements: Type.Optional(Type.Array(Type.String())),
      location: Type.Optional(Type.String()),
      countries: Type.Optional(Type.Array(Type.String())),
      device: Type.Optional(Type.String()),
      devices: Type.Optional(Type.Array(Type.String())),
      category: Type.Optional(Type.String()),
    }),
  ),
  chance: Nullable(
    Type.Object({
      limit: Type.Integer(),
      ahead: Type.Integer(),
      rivals: Type.Integer(),
      weightShare: Type.Number(),
      inResponse: Type.Number(),
    }),
  ),
});

/** A lifecycle action's route schema: `reason` is required to reject, optional otherwise. */
function actionSchema(action: CampaignAction) {
  return campaignSchemas.byId(`${action}Campaign`, {
    summary: `${action[0]!.toUpperCase()}${action.slice(1)} a campaign`,
    description:
      action === 'reject' || action === 'pause'
        ? 'A lifecycle action (D11); `reason` is recorded in the audit log (required to reject).'
        : 'A lifecycle action (D11); refused with 409 from a state it does not apply to. The body may be left out.',
    body: Type.Object({
      reason:
        action === 'reject'
          ? Type.String({ pattern: '\\S', description: 'Not blank.' })
          : Type.Optional(Type.String()),
    }),
  });
}

/**
 * A campaign's fields as sent, its price and budget without the `currency` a client may send back
 * from what it read: the deployment's is no change, any other is refused (422), as amounts are never converted.
 */
function inDeploymentCurrency<Fields extends { price?: unknown; budget?: unknown }>(
  fields: Fields,
  currency: string,
  refusal: string,
): Fields {
  if (fields === null || typeof fields !== 'object') return fields;
  let result = fields;
  for (const name of ['price', 'budget'] as const) {
    const amounts = fields[name];
    if (amounts === null || typeof amounts !== 'object' || !('currency' in amounts)) continue;
    const { currency: sent, ...rest } = amounts as Record<string, unknown>;
    if (sent !== currency) {
      throw unprocessable(refusal, [
        {
          field: `${name}.currency`,
          message: `must be ${currency}, the currency of this deployment (PLACARD_CURRENCY): amounts are never converted`,
        },
      ]);
    }
    result = { ...result, [name]: rest };
  }
  return result;
}

/** Advertisers and campaigns, with the lifecycle actions of D11. */
export async function campaignRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const advertisers = callerService(context, (services, actor) => services.advertisers(actor));
  const campaigns = callerService(context, (services, actor) => services.campaigns(actor));
  const { currency } = context.services;
  const record = (campaign: Campaign) => campaignRecord(campaign, currency);

  const advertiserRecord = (advertiser: Advertiser) => ({
    ...advertiser,
    budget: { ...advertiser.budget, currency },
  });
  /** A budget as sent, without the `currency` a client may send back (the deployment's or 422). */
  const budgetSent = (budget: unknown) =>
    inDeploymentCurrency({ budget }, currency, 'invalid advertiser budget').budget;

  const listAdvertisers = advertiserSchemas.page('listAdvertisers', { summary: 'List advertisers' });
  app.get('/advertisers', { schema: listAdvertisers }, async (request) => {
    const page = pageRequest(request.query);
    return pageOf(await advertisers(request).list(page), page, advertiserRecord);
  });

  const createAdvertiser = advertiserSchemas.created('createAdvertiser', {
    summary: 'Create an advertiser',
    description:
      'The operator’s alone; with `budget`, its spend budgets are set at once, with `pricing`, who sets its campaigns’ prices (D18).',
    body: Type.Object({
      name: Type.String(),
      budget: Type.Optional(advertiserBudgetField),
      pricing: Type.Optional(AdvertiserPricingField),
    }),
  });
  app.post('/advertisers', { schema: createAdvertiser }, async (request, reply) => {
    const service = advertisers(request);
    const budget = budgetSent(request.body.budget);
    let advertiser = await service.create(request.body.name);
    if (request.body.pricing !== undefined)
      advertiser = await service.setPricing(advertiser.id, request.body.pricing);
    if (budget !== undefined) advertiser = await service.setBudget(advertiser.id, budget);
    return reply.code(201).send(one(advertiserRecord(advertiser)));
  });

  const getAdvertiser = advertiserSchemas.byId('getAdvertiser', {
    summary: 'Get an advertiser',
    description:
      'With `spend`: what its campaigns spent this billing month (`PLACARD_BILLING_TIME_ZONE`) and in total, as its budgets count it, and when each budget runs out at the pace of the last hour’s spend (`forecast`).',
  });
  app.get('/advertisers/:id', { schema: getAdvertiser }, async (request) => {
    const service = advertisers(request);
    const advertiser = await service.get(request.params.id);
    const { month, monthMicros, totalMicros, forecast } = await service.spend(advertiser.id);
    const spend = spendJson({ month, monthMicros, totalMicros, forecast }, currency);
    return one({ ...advertiserRecord(advertiser), spend });
  });

  const updateAdvertiser = advertiserSchemas.byId('renameAdvertiser', {
    summary: 'Rename an advertiser, decide who prices its campaigns, or set its budgets',
    description:
      'Renaming and `pricing` (who sets its campaigns’ prices, D18) are the operator’s alone; the advertiser’s own people may send back the `pricing` they read. `budget` may be set by the operator or the advertiser’s own people (D18); setting it releases the campaigns a spent budget held.',
    body: Type.Object({
      name: Type.Optional(Type.String()),
      pricing: Type.Optional(AdvertiserPricingField),
      budget: Type.Optional(advertiserBudgetField),
    }),
  });
  app.patch('/advertisers/:id', { schema: updateAdvertiser }, async (request) => {
    const service = advertisers(request);
    const { name, pricing, budget } = request.body;
    if (name === undefined && pricing === undefined && budget === undefined)
      throw unprocessable('invalid change to an advertiser', [
        { field: 'name', message: 'name, pricing or budget is required' },
      ]);
    let advertiser = name === undefined ? undefined : await service.rename(request.params.id, name);
    if (pricing !== undefined) advertiser = await service.setPricing(request.params.id, pricing);
    if (budget !== undefined) advertiser = await service.setBudget(request.params.id, budgetSent(budget));
    return one(advertiserRecord(advertiser as Advertiser));
  });

  const listCampaigns = campaignSchemas.page('listCampaigns', {
    summary: 'List campaigns',
    filters: {
      status: Type.Optional(Status),
      advertiser: Type.Optional(Type.Integer()),
      placement: Type.Optional(Type.String()),
    },
  });
  app.get('/campaigns', { schema: listCampaigns }, async (request) => {
    const { status, advertiser, placement } = request.query;
    const page = pageRequest(request.query);
    if (status !== undefined && !isCampaignStatus(status)) {
      throw invalidField('status', `must be one of: ${CAMPAIGN_STATUSES.join(', ')}`);
    }
    // A safe integer, as ids are: a larger one cannot name anything, and PostgreSQL refuses it.
    if (
      advertiser !== undefined &&
      !(typeof advertiser === 'string' && /^\d{1,16}$/.test(advertiser) && isId(Number(advertiser)))
    )
      throw invalidField('advertiser', 'must be an advertiser id');
    const found = await campaigns(request).list(
      {
        ...(status !== undefined && { status }),
        ...(advertiser !== undefined && { advertiserId: Number(advertiser) }),
        ...(typeof placement === 'string' && { placement }),
      },
      page,
    );
    return pageOf(found, page, record);
  });

  const createCampaign = campaignSchemas.created('createCampaign', {
    summary: 'Create a campaign (as a draft)',
    // One object, not an intersection, so that it can refuse the fields it does not name.
    body: Type.Object({
      advertiserId: Type.Integer({ minimum: 1 }),
      // The optional fields, then the two required ones in their place again.
      ...Type.Partial(Type.Object(campaignFields)).properties,
      title: campaignFields.title,
      destinationUrl: campaignFields.destinationUrl,
    }),
  });
  app.post('/campaigns', { schema: createCampaign }, async (request, reply) => {
    const { advertiserId, ...input } = request.body;
    if (advertiserId === undefined || advertiserId === null)
      throw unprocessable('invalid campaign', [{ field: 'advertiserId', message: 'is required' }]);
    if (!isId(advertiserId))
      throw unprocessable('invalid campaign', [
        { field: 'advertiserId', message: 'must be an advertiser id' },
      ]);
    const fields = inDeploymentCurrency(input, currency, 'invalid campaign');
    return reply.code(201).send(one(record(await campaigns(request).create(advertiserId, fields))));
  });

  const getCampaign = campaignSchemas.byId('getCampaign', {
    summary: 'Get a campaign',
    description:
      'With `spend`: what it spent on its local day and in total, as its budgets count it, and when each budget runs out at the pace of the last hour’s spend (`forecast`, D18).',
  });
  app.get('/campaigns/:id', { schema: getCampaign }, async (request) => {
    const service = campaigns(request);
    const campaign = await service.get(request.params.id);
    return one({ ...record(campaign), spend: spendJson(await service.budgetSpend(campaign.id), currency) });
  });

  const listCampaignPrices = {
    ...operation('listCampaignPrices', 'Campaigns', {
      summary: 'A campaign’s prices',
      description:
        'Every price the campaign has had (D18), newest (the one in force) first: from when (`since`), who set it (`setBy`, as the audit log names actors), and the billable units charged at it with their cost. A removed price is an entry whose `model` and `amountMicros` are null. Whoever may read the campaign may read them.',
      ok: [200, One(Type.Array(ref('CampaignPrice')))],
    }),
    params: IdParams,
  };
  app.get('/campaigns/:id/prices', { schema: listCampaignPrices }, async (request) =>
    one(
      (await campaigns(request).prices(request.params.id)).map((entry) => ({
        since: new Date(entry.since).toISOString(),
        model: entry.price?.model ?? null,
        amountMicros: entry.price?.amountMicros ?? null,
        currency,
        setBy: entry.setBy,
        billedUnits: entry.billedUnits,
        spendMicros: entry.spendMicros,
      })),
    ),
  );

  const whyCampaign = {
    ...operation('whyCampaign', 'Campaigns', {
      summary: 'Why a campaign is or is not served',
      description:
        "The reasons, in order, that the campaign would not be returned now to a fetch with the given placement, location, device and API key (its partner's blocked categories and advertisers), each with a `code`, what it concerns and a `message` for people: `status`, `flight_ended`, `flight_not_started`, `outside_schedule` (outside the hours its `schedule` allows, with `nextRunAt`, when it next runs), `daily_cap_reached`, `advertiser_budget_spent` (its advertiser's budget is spent, D18), `pacing_ahead` (even pacing holds it back: ahead of its plan, D16), `placements_disabled`, `placement_not_targeted`, `placement_disabled`, `country_not_targeted`, `device_not_targeted`, `category_blocked`, `advertiser_blocked` (the key's partner blocks the campaign's advertiser, named in `advertiserName`). Without reasons it is eligible, and with a placement `chance` says how it fares in the draw (D4) against the campaigns this instance serves now: eligible campaigns of a higher priority (`ahead`), those of its priority (`rivals`), its share of their weight, and the share of 1,000 simulated fetches of `limit` campaigns it is returned in.",
      ok: [200, One(Explanation)],
    }),
    params: IdParams,
    querystring: query(
      Type.Object({
        placement: Type.Optional(Type.String()),
        location: Type.Optional(Type.String()),
        device: Type.Optional(Type.String()),
        key: Type.Optional(Type.Integer({ minimum: 1 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      }),
    ),
  };
  app.get('/campaigns/:id/why', { schema: whyCampaign }, async (request) =>
    one(await context.services.explain(context.actor(request), request.params.id, request.query)),
  );

  const updateCampaign = campaignSchemas.byId('updateCampaign', {
    summary: 'Edit a campaign',
    description:
      'Status changes through the actions, with two exceptions. Editing the creative (title, description, category, destination URL: what partners show) of an approved campaign sends it back to `pending_review`; a completed campaign’s creative does not change (409). Raising or removing the total cap of a campaign completed by that cap, while its flight is not over, makes it `paused`, to `resume`; a campaign completed by its end time stays completed.',
    body: Type.Partial(Type.Object(campaignFields)),
  });
  // `status` is answered by the service, which names the actions that change it.
  const patchOptions = { schema: updateCampaign, config: { refusedByHandler: ['status'] } };
  app.patch('/campaigns/:id', patchOptions, async (request) => {
    const refusal = `invalid change to campaign ${request.params.id}`;
    const changes = inDeploymentCurrency(request.body, currency, refusal);
    return one(record(await campaigns(request).update(request.params.id, changes)));
  });

  for (const action of CAMPAIGN_ACTIONS) {
    app.post(`/campaigns/:id/${action}`, { schema: actionSchema(action) }, async (request) =>
      one(record(await campaigns(request).act(request.params.id, action, request.body.reason))),
    );
  }
}
