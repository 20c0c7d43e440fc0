import { Type } from 'typebox';
import { WEBHOOK_EVENT_NAMES } from '../../domain/webhook-events.js';
import { ref } from '../openapi/management.js';
import { callerService, type AdminContext } from './context.js';
import { recordSchemas } from './route-schemas.js';
import { one, pageOf, pageRequest } from './support.js';
import type { ManagementApp } from './typed-routes.js';

const TAG = 'Webhooks';
const endpointSchemas = recordSchemas(TAG, ref('WebhookEndpoint'));
const secretSchemas = recordSchemas(TAG, ref('WebhookEndpointWithSecret'));
const messageSchemas = recordSchemas(TAG, ref('WebhookMessage'));
const attemptSchemas = recordSchemas(TAG, ref('WebhookMessageWithAttempts'));

const EVENT_TYPES = Type.Array(Type.String(), {
  minItems: 1,
  description: `Event types, or \`["*"]\` for every one the account may receive: ${WEBHOOK_EVENT_NAMES.join(', ')}.`,
});

/**
 * Webhook endpoints (D19): every account registers its own (the operator any account's), rotates
 * their secrets, sends test events, reads what was delivered and replays a message.
 */
export async function webhookRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  const service = callerService(context, (services, actor) => services.webhooks(actor));

  const listWebhooks = endpointSchemas.page('listWebhooks', {
    summary: 'List webhook endpoints',
    description:
      'Oldest first. The operator sees every account’s; an advertiser’s or partner’s token its own.',
  });
  app.get('/webhooks', { schema: listWebhooks }, async (request) => {
    const page = pageRequest(request.query);
    const all = await service(request).list();
    const after = page.after ?? 0;
    return pageOf(
      all.filter((endpoint) => endpoint.id > after).slice(0, page.limit),
      page,
      (endpoint) => endpoint,
    );
  });

  const createWebhook = secretSchemas.created('createWebhook', {
    summary: 'Register a webhook endpoint',
    description:
      'For the token’s own account, or (the operator) for `account`. The answer holds the endpoint’s `whsec_` secret, shown only this once. The URL must be https and resolve to a public address (plain http only to this machine, for the operator’s own endpoints, where the operator allows it): the URL itself is checked now, the addresses its name resolves to at every delivery. An event type the account is never sent is refused (400, naming it). Audited.',
    body: Type.Object({
      url: Type.String({ maxLength: 2000 }),
      eventTypes: EVENT_TYPES,
      description: Type.Optional(Type.String({ maxLength: 500 })),
      account: Type.Optional(
        Type.String({
          description: '`operator`, `advertiser:<id or name>` or `partner:<id or name>`; the operator only.',
        }),
      ),
    }),
  });
  app.post('/webhooks', { schema: createWebhook }, async (request, reply) => {
    reply.code(201);
    return one(await service(request).create(request.body));
  });

  const getWebhook = endpointSchemas.byId('getWebhook', { summary: 'Get a webhook endpoint' });
  app.get('/webhooks/:id', { schema: getWebhook }, async (request) =>
    one(await service(request).get(request.params.id)),
  );

  const updateWebhook = endpointSchemas.byId('updateWebhook', {
    summary: 'Change a webhook endpoint',
    description: 'Only the fields given change. Audited.',
    body: Type.Object({
      url: Type.Optional(Type.String({ maxLength: 2000 })),
      eventTypes: Type.Optional(EVENT_TYPES),
      description: Type.Optional(Type.String({ maxLength: 500 })),
    }),
  });
  app.patch('/webhooks/:id', { schema: updateWebhook }, async (request) =>
    one(await service(request).update(request.params.id, request.body)),
  );

  const disableWebhook = endpointSchemas.byId('disableWebhook', {
    summary: 'Disable a webhook endpoint',
    description:
      'Deliveries stop; its messages wait until it is enabled. Audited (409 when already disabled).',
  });
  app.post('/webhooks/:id/disable', { schema: disableWebhook }, async (request) =>
    one(await service(request).disable(request.params.id)),
  );

  const enableWebhook = endpointSchemas.byId('enableWebhook', {
    summary: 'Enable a webhook endpoint',
    description:
      'Deliveries resume from its oldest waiting message, its failures forgotten. Audited (409 when already enabled).',
  });
  app.post('/webhooks/:id/enable', { schema: enableWebhook }, async (request) =>
    one(await service(request).enable(request.params.id)),
  );

  const rotateWebhookSecret = secretSchemas.byId('rotateWebhookSecret', {
    summary: 'Rotate a webhook endpoint’s secret',
    description:
      'The answer holds the new secret, shown only this once. For 24 hours every delivery carries a signature with the previous secret too, so a receiver can switch without refusing any. Audited.',
  });
  app.post('/webhooks/:id/rotate-secret', { schema: rotateWebhookSecret }, async (request) =>
    one(await service(request).rotateSecret(request.params.id)),
  );

  const testWebhook = messageSchemas.byId('testWebhook', {
    summary: 'Send a test event',
    description:
      'Writes a `webhook.test` message for the endpoint, delivered like any other: within about a second when nothing waits before it, after its older messages and any wait for a failing endpoint otherwise.',
  });
  app.post('/webhooks/:id/test', { schema: testWebhook }, async (request) =>
    one(await service(request).sendTest(request.params.id)),
  );

  const listWebhookMessages = messageSchemas.page('listWebhookMessages', {
    summary: 'List an endpoint’s messages',
    description: 'Newest first, each with its delivery: attempts so far and when it was delivered.',
  });
  app.get(
    '/webhooks/:id/messages',
    { schema: { ...listWebhookMessages, params: getWebhook.params } },
    async (request) => {
      const page = pageRequest(request.query);
      return pageOf(await service(request).messages(request.params.id, page), page, (message) => message);
    },
  );

  const getWebhookMessage = attemptSchemas.byId('getWebhookMessage', {
    summary: 'Get a webhook message with its attempts',
    description: 'Every attempt: when, the answer’s status, how long it took, its first bytes or the error.',
  });
  app.get('/webhook-messages/:id', { schema: getWebhookMessage }, async (request) =>
    one(await service(request).message(request.params.id)),
  );

  const replayWebhookMessage = attemptSchemas.byId('replayWebhookMessage', {
    summary: 'Replay a webhook message',
    description:
      'Sends it again with the same `webhook-id`, after whatever its endpoint still has waiting before it.',
  });
  app.post('/webhook-messages/:id/replay', { schema: replayWebhookMessage }, async (request) =>
    one(await service(request).replay(request.params.id)),
  );
}
