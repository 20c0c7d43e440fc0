import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { mayReceive, WEBHOOK_EVENT_NAMES } from '../../domain/webhook-events.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { keepToShowOnce, setFlash, takeToShowOnce } from './cookies.js';
import { idOf } from './ids.js';
import { idParam, pageWithForms, refusal, type RenderPage } from './page-routes.js';
import { NewWebhookSecretPage, WebhookDeliveriesPage, WebhooksPage } from './pages/webhooks.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, pageContext, requireSignedIn } from './support.js';

/**
 * Webhook endpoints (D19) for every account's people: their endpoints and deliveries; admins and
 * managers add, test, disable, enable, rotate and replay. The same service as the management API.
 */
export async function webhookRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const webhooks = (signedIn: SignedIn) => deps.services.webhooks(signedIn.actor);
  const canChange = (signedIn: SignedIn) => mayChange(signedIn.user.role);

  const endpointsPage: RenderPage = async (request, reply, signedIn, refused) =>
    WebhooksPage({
      page: pageContext(request, reply),
      endpoints: await webhooks(signedIn).list(),
      operator: signedIn.user.account.kind === 'operator',
      eventTypes: WEBHOOK_EVENT_NAMES.filter((type) => mayReceive(signedIn.user.account.kind, type)),
      canChange: canChange(signedIn),
      refused,
    });

  const form = pageWithForms(app, '/webhooks', endpointsPage);
  form(
    '/webhooks/:id/test',
    async (signedIn, _fields, params) => {
      const service = webhooks(signedIn);
      const message = await service.sendTest(idParam(params, 'webhook endpoint'));
      return { message, endpoint: await service.get(message.endpointId) };
    },
    ({ message, endpoint }) =>
      endpoint.enabled
        ? `a test event is queued (${message.webhookId}): it goes out after any older message of the endpoint`
        : `a test event is queued (${message.webhookId}), but ${endpoint.url} is disabled: it goes out once the endpoint is enabled`,
  );
  form(
    '/webhooks/:id/disable',
    (signedIn, _fields, params) => webhooks(signedIn).disable(idParam(params, 'webhook endpoint')),
    (endpoint) => `${endpoint.url} is disabled: its messages wait until it is enabled`,
  );
  form(
    '/webhooks/:id/enable',
    (signedIn, _fields, params) => webhooks(signedIn).enable(idParam(params, 'webhook endpoint')),
    (endpoint) => `${endpoint.url} is enabled: its waiting messages go out in order`,
  );

  /**
   * A form that gives the endpoint a secret (adding it, rotating its secret): the secret is kept
   * for the page that shows it once, which the browser is sent to, so a reload repeats nothing.
   */
  const withSecret = (
    path: string,
    change: (
      signedIn: SignedIn,
      request: FastifyRequest,
    ) => ReturnType<ReturnType<typeof webhooks>['create']>,
  ) =>
    app.post(path, PAGE, async (request: FastifyRequest, reply: FastifyReply) => {
      const signedIn = requireSignedIn(request, reply)!;
      let made: Awaited<ReturnType<typeof change>> | undefined;
      const refused = await attempt(
        reply,
        async () => {
          made = await change(signedIn, request);
        },
        (problem, problems) => endpointsPage(request, reply, signedIn, refusal(request, problem, problems)),
      );
      if (refused || !made) return reply;
      keepToShowOnce(reply, `webhook:${made.id}`, made.secret);
      return reply.redirect(`/webhooks/${made.id}/secret`, 303);
    });
  withSecret('/webhooks', (signedIn, request) => {
    const fields = formFields(request);
    return webhooks(signedIn).create({
      url: fields['url'],
      eventTypes: fields['eventTypes'],
      description: fields['description'],
    });
  });
  withSecret('/webhooks/:id/rotate-secret', (signedIn, request) =>
    webhooks(signedIn).rotateSecret(idParam(request.params as Record<string, string>, 'webhook endpoint')),
  );
  app.get('/webhooks/:id/secret', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const endpoint = await webhooks(signedIn).get(
      idParam(request.params as Record<string, string>, 'webhook endpoint'),
    );
    // Undefined when it was shown already (a reload) or none was made here: the page says so.
    const secret = takeToShowOnce(request, reply, `webhook:${endpoint.id}`);
    // A rotation leaves the previous secret signing for a day; a new endpoint has none.
    const rotated = endpoint.previousSecretUntil !== null;
    return sendPage(
      reply,
      NewWebhookSecretPage({ page: pageContext(request, reply), endpoint, secret, rotated }),
    );
  });

  const deliveriesPage = async (request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn) => {
    const service = webhooks(signedIn);
    const id = idParam(request.params as Record<string, string>, 'webhook endpoint');
    const endpoint = await service.get(id);
    const messages = await Promise.all(
      (await service.messages(id, { limit: 50 })).map((message) => service.message(message.id)),
    );
    return WebhookDeliveriesPage({
      page: pageContext(request, reply),
      endpoint,
      messages,
      canChange: canChange(signedIn),
    });
  };
  app.get('/webhooks/:id', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await deliveriesPage(request, reply, signedIn));
  });
  app.post('/webhooks/:id/messages/:message/replay', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply)!;
    const params = request.params as Record<string, string>;
    const id = idParam(params, 'webhook endpoint');
    const message = await webhooks(signedIn).replay(idOf(params['message'], 'webhook message'));
    setFlash(reply, `${message.eventType} ${message.webhookId} is sent again`);
    return reply.redirect(`/webhooks/${id}`, 303);
  });
}
