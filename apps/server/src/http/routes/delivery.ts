import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseFetchQuery, parseTrackingBody } from '../../domain/requests.js';
import type { DeliveryService } from '../../services/delivery.js';
import type { ServingState } from '../../services/serving-state.js';
import type { EventKind } from '../../store/store.js';
import { partnerAuth } from '../auth.js';
import { HttpError } from '../errors.js';

/** Paths and methods of the partner API, also used to answer 405 on a known path (D8). */
export const PARTNER_ROUTES = new Map<string, string[]>([
  ['/api/v1/campaigns/fetch', ['GET', 'HEAD']],
  ['/api/v1/campaigns/impression', ['POST']],
  ['/api/v1/campaigns/click', ['POST']],
]);

/** Tracking bodies are tiny; anything over 16 KiB is refused with 413 (D5). */
const TRACKING_BODY_LIMIT = 16 * 1024;

const ACKNOWLEDGEMENTS: Record<EventKind, string> = {
  impression: JSON.stringify({ status: 'success', message: 'Impression tracked successfully' }),
  click: JSON.stringify({ status: 'success', message: 'Click tracked successfully' }),
};

/** Refuses a tracking request whose media type is not JSON before its body is read (D5). */
async function requireJson(request: FastifyRequest): Promise<void> {
  const header = request.headers['content-type'];
  const mediaType = header?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') throw new HttpError(415, 'Content-Type must be application/json');
}

export interface DeliveryRouteDeps {
  state: ServingState;
  delivery: DeliveryService;
}

/** The three operations of the partner contract (section 4). */
export async function deliveryRoutes(app: FastifyInstance, deps: DeliveryRouteDeps): Promise<void> {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', partnerAuth(deps.state));

  app.get('/api/v1/campaigns/fetch', async (request: FastifyRequest, reply: FastifyReply) => {
    const query = parseFetchQuery(request.query as Record<string, string | string[] | undefined>);
    const body = deps.delivery.fetch(query);
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });

  for (const kind of ['impression', 'click'] as const) {
    app.post(
      `/api/v1/campaigns/${kind}`,
      { bodyLimit: TRACKING_BODY_LIMIT, preParsing: requireJson },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const tracking = parseTrackingBody(request.body);
        await deps.delivery.track(kind, tracking, request.caller!);
        return reply.header('content-type', 'application/json; charset=utf-8').send(ACKNOWLEDGEMENTS[kind]);
      },
    );
  }
}
