// The webhook event types (D19): what each tells, which accounts receive it, and the body every
// delivery sends. Pure: the store writes the outbox from these, the services check subscriptions.
import type { AccountKind } from './accounts.js';
import { REACHED } from './campaigns.js';
import { invalidField } from './errors.js';

/** Every event type an endpoint may subscribe to, with what it tells its receiver. */
export const WEBHOOK_EVENT_TYPES = {
  'campaign.submitted': 'A campaign was submitted for review.',
  'campaign.approved': 'A campaign was approved: it serves from its start time.',
  'campaign.rejected': 'A campaign was rejected; `reason` says why.',
  'campaign.completed': 'A campaign ended: its end time passed, or a total cap or budget was reached.',
  'campaign.cap_reached':
    'A campaign reached a cap: a total cap completes it, a daily cap holds it for the day.',
  'campaign.budget_reached':
    'A campaign reached a budget, its own or its advertiser’s: fetches stop offering it until the budget allows again.',
  'key.created': 'A partner’s API key was created.',
  'key.flagged': 'A partner’s API key was flagged: its traffic looks fraudulent or broken (D15).',
  'key.suspended': 'A partner’s API key was suspended: it is answered 403 until reinstated.',
  'key.reinstated': 'A suspended API key was reinstated.',
  'key.expiring': 'A partner’s API key expires within 7 days.',
  'statement.issued': 'A monthly statement was issued to the account.',
  'flag.raised': 'Operator only: a key flag was raised, with its evidence, for review.',
  'endpoint.disabled':
    'Operator only: a webhook endpoint failed for the whole retry period and was disabled.',
  'webhook.test': 'A test event sent on request; it changes nothing.',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;
export const WEBHOOK_EVENT_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

/**
 * The accounts besides the operator's (which receives every type) that each type is sent to: those
 * whose objects it tells of. An endpoint of any other account would never be sent it.
 */
const RECEIVERS: Record<WebhookEventType, ReadonlyArray<'advertiser' | 'partner'>> = {
  'campaign.submitted': ['advertiser'],
  'campaign.approved': ['advertiser'],
  'campaign.rejected': ['advertiser'],
  'campaign.completed': ['advertiser'],
  'campaign.cap_reached': ['advertiser'],
  'campaign.budget_reached': ['advertiser'],
  'key.created': ['partner'],
  'key.flagged': ['partner'],
  'key.suspended': ['partner'],
  'key.reinstated': ['partner'],
  'key.expiring': ['partner'],
  'statement.issued': ['advertiser', 'partner'],
  'flag.raised': [],
  'endpoint.disabled': [],
  'webhook.test': ['advertiser', 'partner'],
};

/** Whether an account of this kind is ever sent `type`, so its endpoints may subscribe to it. */
export const mayReceive = (kind: AccountKind, type: WebhookEventType): boolean =>
  kind === 'operator' || RECEIVERS[type].includes(kind);

/** Every event type an account of this kind is sent: what `*` subscribes its endpoints to. */
export const typesReceivedBy = (kind: AccountKind): WebhookEventType[] =>
  WEBHOOK_EVENT_NAMES.filter((type) => mayReceive(kind, type));

/** An endpoint's event types as given (a list of names, or `*` for all it may receive), checked. */
export function checkEventTypes(value: unknown, kind: AccountKind): WebhookEventType[] {
  const names = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : null;
  if (names === null || names.length === 0)
    throw invalidField('eventTypes', 'must list at least one event type (or * for all)');
  const trimmed = names.map((name) => (typeof name === 'string' ? name.trim() : ''));
  const received = typesReceivedBy(kind);
  if (trimmed.includes('*')) return received;
  const unknown = trimmed.filter((name) => !(name in WEBHOOK_EVENT_TYPES));
  if (unknown.length > 0)
    throw invalidField(
      'eventTypes',
      `has unknown event types: ${unknown.join(', ')}; known: ${WEBHOOK_EVENT_NAMES.join(', ')}`,
    );
  const refused = trimmed.filter((name) => !mayReceive(kind, name as WebhookEventType));
  if (refused.length > 0)
    throw invalidField(
      'eventTypes',
      `must list only types ${kind === 'advertiser' ? 'an advertiser' : 'a partner'} is sent, not ${refused.join(', ')}; ${kind}s are sent ${received.join(', ')}`,
    );
  return [...new Set(trimmed as WebhookEventType[])];
}

/**
 * One event as it is written to the outbox: its type, the account whose object it concerns
 * (`advertiser:<id>`, `partner:<id>`; null for the operator's own affairs) and its `data`, which
 * holds only what that account may see. The operator's endpoints receive every event too.
 */
export interface WebhookEvent {
  type: WebhookEventType;
  owner: string | null;
  data: Record<string, unknown>;
}

/** The body of a delivery, as Standard Webhooks recommends: `type`, `timestamp`, `data`. */
export function webhookBody(event: WebhookEvent, at: number): string {
  return JSON.stringify({ type: event.type, timestamp: new Date(at).toISOString(), data: event.data });
}

/** An audit entry, as far as its webhooks depend on it. */
export interface AuditedChange {
  objectType: string;
  objectId: string;
  action: string;
  reason: string | null;
  before: unknown;
  after: unknown;
}

/** The event each reason the system completes or holds a campaign for tells (`REACHED`). */
const REACHED_EVENT = new Map<string, WebhookEventType>([
  [REACHED.totalCap, 'campaign.cap_reached'],
  [REACHED.dailyCap, 'campaign.cap_reached'],
  [REACHED.totalBudget, 'campaign.budget_reached'],
  [REACHED.dailyBudget, 'campaign.budget_reached'],
  [REACHED.monthlyBudget, 'campaign.budget_reached'],
]);

/**
 * The webhook event types an audited change of a campaign causes (its owner and data are the
 * store's to add, which knows the campaign's advertiser and title).
 */
export function campaignEventTypes(change: AuditedChange): WebhookEventType[] {
  const reached = REACHED_EVENT.get(change.reason ?? '');
  switch (change.action) {
    case 'submit':
      return ['campaign.submitted'];
    case 'approve':
      return ['campaign.approved'];
    case 'reject':
      return ['campaign.rejected'];
    case 'complete':
      return reached === undefined ? ['campaign.completed'] : [reached, 'campaign.completed'];
    case 'hold':
      return reached === undefined ? [] : [reached];
    default:
      return [];
  }
}

/** The webhook event types an audited change of an API key causes. */
export function keyEventTypes(change: AuditedChange): WebhookEventType[] {
  if (change.action === 'create') return ['key.created'];
  if (change.action === 'suspend') return ['key.suspended'];
  if (change.action === 'reinstate') return ['key.reinstated'];
  return [];
}
