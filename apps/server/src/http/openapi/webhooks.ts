import { Type } from 'typebox';
import {
  WEBHOOK_EVENT_NAMES,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../domain/webhook-events.js';
import { Instant, Nullable, NullableInstant } from './common.js';

const EventType = Type.Union(
  WEBHOOK_EVENT_NAMES.map((type) => Type.Literal(type)),
  { description: 'An event type (see the `webhooks` section of this document).' },
);

const endpointFields = {
  id: Type.Integer(),
  account: Type.String({
    description: '`operator`, `advertiser:<id>` or `partner:<id>`: whose endpoint it is.',
  }),
  url: Type.String({
    description: 'Where deliveries are POSTed: https (plain http only to this machine, where allowed).',
  }),
  description: Type.String(),
  eventTypes: Type.Array(EventType),
  enabled: Type.Boolean({
    description: 'False once disabled, by a person or after failing for the whole retry period.',
  }),
  disabledAt: NullableInstant,
  disabledReason: Nullable(Type.String()),
  failingSince: Type.Union([Instant, Type.Null()], {
    description: 'The first failure of the failures in a row.',
  }),
  failures: Type.Integer({ description: 'Failed attempts in a row (0 once one succeeds).' }),
  nextAttemptAt: Type.Union([Instant, Type.Null()], {
    description: 'When a failing endpoint is tried again.',
  }),
  previousSecretUntil: Type.Union([Instant, Type.Null()], {
    description: 'During a rotation: until when deliveries are signed with the previous secret too.',
  }),
  createdAt: Instant,
  createdBy: Type.String(),
};

export const WebhookEndpoint = Type.Object(endpointFields, { $id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({
      description: 'The `whsec_` secret deliveries are signed with. Shown only in this answer: keep it now.',
    }),
  },
  { $id: 'WebhookEndpointWithSecret' },
);

const messageFields = {
  id: Type.Integer(),
  webhookId: Type.String({
    description: 'The `webhook-id` every attempt sends (`msg_…`): the same on a retry.',
  }),
  endpointId: Type.Integer(),
  eventType: EventType,
  createdAt: Instant,
  attempts: Type.Integer(),
  deliveredAt: Type.Union([Instant, Type.Null()], { description: 'The first 2xx answer; null until then.' }),
  payload: Type.Ref('WebhookPayload'),
};

export const WebhookMessage = Type.Object(messageFields, { $id: 'WebhookMessage' });

export const WebhookMessageWithAttempts = Type.Object(
  {
    ...messageFields,
    attemptLog: Type.Array(
      Type.Object({
        id: Type.Integer(),
        at: Instant,
        status: Nullable(Type.Integer({ description: 'The answer’s status; null when none came.' })),
        durationMs: Type.Integer(),
        answer: Type.String({ description: 'The first bytes of the answer’s body.' }),
        error: Nullable(
          Type.String({ description: 'What went wrong before an answer: refused, timed out…' }),
        ),
      }),
    ),
  },
  { $id: 'WebhookMessageWithAttempts' },
);

export const WebhookPayload = Type.Object(
  {
    type: EventType,
    timestamp: Instant,
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'What the event concerns; see each event.' },
    ),
  },
  { $id: 'WebhookPayload', description: 'The body of every delivery, as Standard Webhooks recommends.' },
);

export const WEBHOOK_SCHEMAS = [
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookMessage,
  WebhookMessageWithAttempts,
  WebhookPayload,
];

const campaign = { campaignId: 42, advertiserId: 7, title: 'Winter boots' };
const key = { keyId: 12, partnerId: 3, label: 'production' };

/** An example `data` of each event type, as a delivery carries it. */
const EXAMPLES: Record<WebhookEventType, Record<string, unknown>> = {
  'campaign.submitted': { ...campaign, status: 'pending_review', reason: null },
  'campaign.approved': { ...campaign, status: 'scheduled', reason: null },
  'campaign.rejected': { ...campaign, status: 'rejected', reason: 'The landing page does not load.' },
  'campaign.completed': { ...campaign, status: 'completed', reason: 'end time passed' },
  'campaign.cap_reached': { ...campaign, status: 'completed', reason: 'total cap reached' },
  'campaign.budget_reached': { ...campaign, status: 'completed', reason: 'total budget reached' },
  'key.created': { ...key, status: 'active', reason: null },
  'key.flagged': { keyId: 12, partnerId: 3, signal: 'ctr' },
  'key.suspended': { ...key, status: 'suspended', reason: 'traffic from a data centre' },
  'key.reinstated': { ...key, status: 'active', reason: null },
  'key.expiring': { ...key, expiresAt: '2026-12-04T00:00:00.000Z' },
  'statement.issued': {
    statementId: 9,
    kind: 'partner',
    accountId: 3,
    month: '2026-10',
    currency: 'USD',
    totalMicros: 505250,
    payableMicros: 505250,
  },
  'flag.raised': {
    flagId: 5,
    keyId: 12,
    partnerId: 3,
    signal: 'ctr',
    evidence: { summary: 'CTR 9.1% against 0.4%' },
  },
  'endpoint.disabled': {
    endpointId: 4,
    account: 'partner:3',
    url: 'https://hooks.example/placard',
    reason: 'failed for 3 days, since 2026-11-01T10:00:00.000Z: answered 503',
  },
  'webhook.test': { endpointId: 4, requestedBy: 'user:2' },
};

/**
 * The document's `webhooks` section (OpenAPI 3.1): each event type as the request Placard sends to
 * an endpoint, with its Standard Webhooks headers and an example body.
 */
export function webhooksSection() {
  const header = (description: string) => ({ required: true, schema: { type: 'string' }, description });
  return Object.fromEntries(
    WEBHOOK_EVENT_NAMES.map((type) => [
      type,
      {
        post: {
          summary: type,
          description: `${WEBHOOK_EVENT_TYPES[type]} Signed per Standard Webhooks: verify \`webhook-signature\` with the endpoint's \`whsec_\` secret before trusting the body (docs/webhooks.md).`,
          operationId: `webhook_${type.replace('.', '_')}`,
          // Placard calls the receiver: no credential of Placard's, the signature authenticates it.
          security: [],
          parameters: [
            { in: 'header', name: 'webhook-id', ...header('The message id: the same on every retry of it.') },
            {
              in: 'header',
              name: 'webhook-timestamp',
              ...header('Seconds since the epoch, when it was sent.'),
            },
            {
              in: 'header',
              name: 'webhook-signature',
              ...header('`v1,<base64 HMAC-SHA256>`; two, space separated, during a secret rotation.'),
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/WebhookPayload' },
                example: { type, timestamp: '2026-11-28T10:00:00.000Z', data: EXAMPLES[type] },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received: any 2xx counts as delivered.' },
            default: { description: 'Anything else (or no answer within 10 s) is retried with backoff.' },
          },
        },
      },
    ]),
  );
}
