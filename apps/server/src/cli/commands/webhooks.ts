import type { Command } from 'commander';
import type { Config } from '../../config.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhook-events.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { WebhookService, type WebhookEndpointView } from '../../services/webhooks.js';
import type { Store } from '../../store/store.js';
import { positiveInteger, storeAction } from '../context.js';
import { emit, printTable, type OutputOptions } from '../output.js';

/** The service as the command line uses it: the operator's, with the deployment's address allowance. */
const service = (store: Store, config: Config) =>
  new WebhookService(store, CLI_ACTOR, Date.now, {
    loopback: config.webhooksAllowLoopback,
    privateNetworks: config.webhooksAllowPrivate,
  });

/** A message as people name it: the `msg_…` webhook-id every page and delivery shows, or its number. */
function messageRef(value: string): number | string {
  if (/^msg_[A-Za-z0-9_-]+$/.test(value)) return value;
  if (/^[1-9]\d*$/.test(value)) return Number(value);
  throw new Error(`a message is named by its webhook-id (msg_…) or its number (got "${value}")`);
}

const endpointLine = (endpoint: WebhookEndpointView): string =>
  `webhook endpoint ${endpoint.id} (${endpoint.account}): ${endpoint.url}, ${endpoint.enabled ? 'enabled' : `disabled (${endpoint.disabledReason ?? ''})`}; events: ${endpoint.eventTypes.join(', ')}`;

/** Prints an endpoint with the secret it was just given, which is never shown again. */
function printSecret(
  options: OutputOptions,
  endpoint: WebhookEndpointView & { secret: string },
  said: string,
) {
  emit(options, endpoint, () => {
    console.log(said);
    console.log(endpointLine(endpoint));
    console.log(`secret: ${endpoint.secret}`);
    console.log(
      'This secret is shown only now: give it to the receiver, which verifies every delivery with it.',
    );
  });
}

/** Webhooks (D19): endpoints, their secrets, test events, messages with their attempts, replays. */
export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('endpoints that are told when something happens (D19), and what was delivered to them');
  storeAction(
    webhooks.command('events').description('the event types an endpoint may take'),

    async (_context, options: OutputOptions) => {
      const types = Object.entries(WEBHOOK_EVENT_TYPES).map(([type, description]) => ({ type, description }));
      emit(options, types, () => printTable(types, ['type', 'description']));
    },
  );
  storeAction(
    webhooks.command('list').description('every endpoint'),
    async ({ store, config }, options: OutputOptions) => {
      const list = await service(store, config).list();
      emit(options, list, () =>
        printTable(
          list.map((endpoint) => ({
            ...endpoint,
            enabled: endpoint.enabled,
            eventTypes: endpoint.eventTypes.join(','),
          })),
          ['id', 'account', 'url', 'enabled', 'failures', 'eventTypes', 'description'],
        ),
      );
    },
  );
  storeAction(
    webhooks
      .command('create <url>')
      .description('register an endpoint; its secret is printed once')
      .requiredOption('--events <types>', 'comma-separated event types (see "webhooks events"), or * for all')
      .option('--account <account>', 'operator, advertiser:<id or name> or partner:<id or name>', 'operator')
      .option('--description <text>', 'what the endpoint is for'),
    async (
      { store, config },
      options: OutputOptions & { events: string; account: string; description?: string },
      url: string,
    ) => {
      const endpoint = await service(store, config).create({
        url,
        eventTypes: options.events,
        account: options.account,
        description: options.description,
      });
      printSecret(options, endpoint, `created webhook endpoint ${endpoint.id}`);
    },
  );
  storeAction(
    webhooks
      .command('update <id>')
      .description("change an endpoint's URL, event types or description")
      .option('--url <url>', 'the new URL')
      .option('--events <types>', 'comma-separated event types, or * for all')
      .option('--description <text>', 'what the endpoint is for'),
    async (
      { store, config },
      options: OutputOptions & { url?: string; events?: string; description?: string },
      id: string,
    ) => {
      const endpoint = await service(store, config).update(positiveInteger(id, 'endpoint id'), {
        url: options.url,
        eventTypes: options.events,
        description: options.description,
      });
      emit(options, endpoint, () => console.log(endpointLine(endpoint)));
    },
  );
  for (const [verb, description] of [
    ['disable', 'stop delivering to an endpoint (its messages wait)'],
    ['enable', 'deliver to an endpoint again, from its oldest waiting message'],
  ] as const)
    storeAction(
      webhooks.command(`${verb} <id>`).description(description),
      async ({ store, config }, options: OutputOptions, id: string) => {
        const endpoint = await service(store, config)[verb](positiveInteger(id, 'endpoint id'));
        emit(options, endpoint, () => console.log(endpointLine(endpoint)));
      },
    );
  storeAction(
    webhooks
      .command('rotate-secret <id>')
      .description('give an endpoint a new secret; for 24 hours deliveries are signed with the old one too'),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const endpoint = await service(store, config).rotateSecret(positiveInteger(id, 'endpoint id'));
      printSecret(
        options,
        endpoint,
        `new secret for webhook endpoint ${endpoint.id}; the previous one signs too until ${endpoint.previousSecretUntil ?? '-'}`,
      );
    },
  );
  storeAction(
    webhooks.command('test <id>').description('send a webhook.test event to an endpoint'),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const endpoints = service(store, config);
      const message = await endpoints.sendTest(positiveInteger(id, 'endpoint id'));
      const endpoint = await endpoints.get(message.endpointId);
      emit(options, message, () =>
        console.log(
          endpoint.enabled
            ? `webhook.test queued as message ${message.id} (${message.webhookId}); a serving instance delivers it`
            : `webhook.test queued as message ${message.id} (${message.webhookId}), but endpoint ${endpoint.id} is disabled: it is delivered once the endpoint is enabled (webhooks enable ${endpoint.id})`,
        ),
      );
    },
  );
  storeAction(
    webhooks
      .command('messages <id>')
      .description("an endpoint's messages, newest first, with their delivery")
      .option('--limit <n>', 'at most this many', '50'),
    async ({ store, config }, options: OutputOptions & { limit: string }, id: string) => {
      const messages = await service(store, config).messages(positiveInteger(id, 'endpoint id'), {
        limit: positiveInteger(options.limit, 'limit'),
      });
      emit(options, messages, () =>
        printTable(
          messages.map(({ payload: _payload, ...row }) => row),
          ['id', 'webhookId', 'eventType', 'createdAt', 'attempts', 'deliveredAt'],
        ),
      );
    },
  );
  storeAction(
    webhooks
      .command('attempts <message>')
      .description(
        'a message, by its webhook-id (msg_…) or its number (see "webhooks messages"), with every attempt to deliver it',
      ),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const message = await service(store, config).message(messageRef(id));
      emit(options, message, () => {
        console.log(
          `message ${message.id} (${message.webhookId}), ${message.eventType}: ${message.deliveredAt === null ? 'not delivered yet' : `delivered ${message.deliveredAt}`}`,
        );
        printTable(message.attemptLog, ['at', 'status', 'durationMs', 'error', 'answer']);
      });
    },
  );
  storeAction(
    webhooks
      .command('replay <message>')
      .description('send a message (its webhook-id, msg_…, or its number) again, with the same webhook-id'),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const message = await service(store, config).replay(messageRef(id));
      emit(options, message, () => console.log(`message ${message.id} (${message.webhookId}) queued again`));
    },
  );
}
