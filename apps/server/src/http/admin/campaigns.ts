import type { FastifyInstance } from 'fastify';
import { CAMPAIGN_STATUSES, type CampaignStatus } from '../../domain/campaigns.js';
import { invalidField, unprocessable } from '../../domain/errors.js';
import { CAMPAIGN_ACTIONS } from '../../domain/lifecycle.js';
import { AdvertiserService } from '../../services/advertisers.js';
import { campaignToJson, CampaignService } from '../../services/campaigns.js';
import { explainCampaign, type WhyQuery } from '../../services/serving-explainer.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { fields, idParam, isId, one, pageOf, pageRequest } from './support.js';

/** Advertisers and campaigns, with the lifecycle actions of D11. */
export async function campaignRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  const advertisers = (request: Parameters<AdminContext['actor']>[0]) =>
    new AdvertiserService(context.store, context.actor(request), context.clock);
  const campaigns = (request: Parameters<AdminContext['actor']>[0]) =>
    new CampaignService(context.store, context.actor(request), context.clock);

  app.get('/advertisers', { schema: MANAGEMENT_ROUTES.listAdvertisers }, async (request) => {
    const page = pageRequest(request.query as Record<string, unknown>);
    return pageOf(await advertisers(request).list(page), page, (a) => a);
  });
  app.post('/advertisers', { schema: MANAGEMENT_ROUTES.createAdvertiser }, async (request, reply) =>
    reply.code(201).send(one(await advertisers(request).create(fields(request)['name']))),
  );
  app.get('/advertisers/:id', { schema: MANAGEMENT_ROUTES.getAdvertiser }, async (request) =>
    one(await advertisers(request).get(idParam(request))),
  );
  app.patch('/advertisers/:id', { schema: MANAGEMENT_ROUTES.renameAdvertiser }, async (request) =>
    one(await advertisers(request).rename(idParam(request), fields(request)['name'])),
  );

  app.get('/campaigns', { schema: MANAGEMENT_ROUTES.listCampaigns }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const page = pageRequest(query);
    const status = query['status'];
    if (status !== undefined && !(CAMPAIGN_STATUSES as readonly unknown[]).includes(status)) {
      throw invalidField('status', `must be one of: ${CAMPAIGN_STATUSES.join(', ')}`);
    }
    const advertiser = query['advertiser'];
    // A safe integer, as ids are: a larger one cannot name anything, and PostgreSQL refuses it.
    if (
      advertiser !== undefined &&
      !(typeof advertiser === 'string' && /^\d{1,16}$/.test(advertiser) && isId(Number(advertiser)))
    )
      throw invalidField('advertiser', 'must be an advertiser id');
    const found = await campaigns(request).list(
      {
        ...(status !== undefined && { status: status as CampaignStatus }),
        ...(advertiser !== undefined && { advertiserId: Number(advertiser) }),
        ...(typeof query['placement'] === 'string' && { placement: query['placement'] }),
      },
      page,
    );
    return pageOf(found, page, campaignToJson);
  });
  app.post('/campaigns', { schema: MANAGEMENT_ROUTES.createCampaign }, async (request, reply) => {
    const body = fields(request);
    const advertiserId = body['advertiserId'];
    if (advertiserId === undefined || advertiserId === null)
      throw unprocessable('invalid campaign', [{ field: 'advertiserId', message: 'is required' }]);
    if (!isId(advertiserId))
      throw unprocessable('invalid campaign', [
        { field: 'advertiserId', message: 'must be an advertiser id' },
      ]);
    const input = Object.fromEntries(Object.entries(body).filter(([field]) => field !== 'advertiserId'));
    return reply.code(201).send(one(campaignToJson(await campaigns(request).create(advertiserId, input))));
  });
  app.get('/campaigns/:id', { schema: MANAGEMENT_ROUTES.getCampaign }, async (request) =>
    one(campaignToJson(await campaigns(request).get(idParam(request)))),
  );
  app.get('/campaigns/:id/why', { schema: MANAGEMENT_ROUTES.whyCampaign }, async (request) =>
    one(
      await explainCampaign(
        context.store,
        context.actor(request),
        context.index(),
        context.clock(),
        idParam(request),
        request.query as WhyQuery,
      ),
    ),
  );
  // `status` is answered by the service, which names the actions that change it.
  const patchOptions = { schema: MANAGEMENT_ROUTES.updateCampaign, config: { refusedByHandler: ['status'] } };
  app.patch('/campaigns/:id', patchOptions, async (request) =>
    one(campaignToJson(await campaigns(request).update(idParam(request), fields(request)))),
  );
  for (const action of CAMPAIGN_ACTIONS) {
    app.post(
      `/campaigns/:id/${action}`,
      { schema: MANAGEMENT_ROUTES[`${action}Campaign`] },
      async (request) =>
        one(
          campaignToJson(await campaigns(request).act(idParam(request), action, fields(request)['reason'])),
        ),
    );
  }
}
