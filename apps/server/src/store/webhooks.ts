// Webhooks (D19): endpoints, the outbox written in the transaction of each change, and the delivery
// job's claims and attempts. Part of the Store façade (store.ts): functions over a StoreContext.
import type { Selectable } from 'kysely';
import {
  campaignEventTypes,
  keyEventTypes,
  mayReceive,
  webhookBody,
  type AuditedChange,
  type WebhookEvent,
  type WebhookEventType,
} from '../domain/webhook-events.js';
import type { AccountKind } from '../domain/accounts.js';
import { newMessageId } from '../domain/webhook-signatures.js';
import { page, transact, type StoreContext } from './context.js';
import type { PageRequest } from './rows.js';
import type { WebhookAttemptTable, WebhookEndpointTable, WebhookMessageTable } from './schema.js';

export interface WebhookEndpointRecord {
  id: number;
  /** `operator`, `advertiser:<id>` or `partner:<id>`. */
  account: string;
  url: string;
  description: string;
  eventTypes: WebhookEventType[];
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: number | null;
  createdAt: number;
  createdBy: string;
  updatedAt: number;
  nextAttemptAt: number;
  failures: number;
  failingSince: number | null;
  disabledAt: number | null;
  disabledReason: string | null;
}

export interface WebhookMessageRecord {
  id: number;
  messageId: string;
  endpointId: number;
  eventType: string;
  payload: string;
  createdAt: number;
  attempts: number;
  deliveredAt: number | null;
}

export interface WebhookAttemptRecord {
  id: number;
  messageId: number;
  endpointId: number;
  at: number;
  status: number | null;
  durationMs: number;
  answer: string;
  error: string | null;
  instance: string;
}

const toEndpoint = (row: Selectable<WebhookEndpointTable>): WebhookEndpointRecord => ({
  id: Number(row.id),
  account: row.account,
  url: row.url,
  description: row.description,
  // An endpoint registered before its types were checked against its account (an advertiser's `*`
  // once listed key events) reads as the types it is sent.
  eventTypes: (JSON.parse(row.event_types) as WebhookEventType[]).filter((type) =>
    mayReceive(row.account.split(':')[0] as AccountKind, type),
  ),
  secret: row.secret,
  previousSecret: row.previous_secret,
  previousSecretUntil: row.previous_secret_until === null ? null : Number(row.previous_secret_until),
  createdAt: Number(row.created_at),
  createdBy: row.created_by,
  updatedAt: Number(row.updated_at),
  nextAttemptAt: Number(row.next_attempt_at),
  failures: Number(row.failures),
  failingSince: row.failing_since === null ? null : Number(row.failing_since),
  disabledAt: row.disabled_at === null ? null : Number(row.disabled_at),
  disabledReason: row.disabled_reason,
});

const toMessage = (row: Selectable<WebhookMessageTable>): WebhookMessageRecord => ({
  id: Number(row.id),
  messageId: row.message_id,
  endpointId: Number(row.endpoint_id),
  eventType: row.event_type,
  payload: row.payload,
  createdAt: Number(row.created_at),
  attempts: Number(row.attempts),
  deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
});

const toAttempt = (row: Selectable<WebhookAttemptTable>): WebhookAttemptRecord => ({
  id: Number(row.id),
  messageId: Number(row.message_id),
  endpointId: Number(row.endpoint_id),
  at: Number(row.at),
  status: row.status === null ? null : Number(row.status),
  durationMs: Number(row.duration_ms),
  answer: row.answer,
  error: row.error,
  instance: row.instance,
});

export async function createWebhookEndpoint(
  ctx: StoreContext,
  endpoint: {
    account: string;
    url: string;
    description: string;
    eventTypes: readonly WebhookEventType[];
    secret: string;
    createdBy: string;
  },
  now: number,
): Promise<WebhookEndpointRecord> {
  const row = await ctx.db
    .insertInto('webhook_endpoints')
    .values({
      account: endpoint.account,
      url: endpoint.url,
      description: endpoint.description,
      event_types: JSON.stringify(endpoint.eventTypes),
      secret: endpoint.secret,
      created_at: now,
      created_by: endpoint.createdBy,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

export async function getWebhookEndpoint(
  ctx: StoreContext,
  id: number,
): Promise<WebhookEndpointRecord | undefined> {
  const row = await ctx.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row && toEndpoint(row);
}

/** Every endpoint, or one account's, oldest first. */
export async function listWebhookEndpoints(
  ctx: StoreContext,
  account?: string,
): Promise<WebhookEndpointRecord[]> {
  const rows = await ctx.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .$if(account !== undefined, (q) => q.where('account', '=', account!))
    .orderBy('id')
    .execute();
  return rows.map(toEndpoint);
}

/** Changes what an endpoint is (URL, description, event types, secrets, enabled or not). */
export async function updateWebhookEndpoint(
  ctx: StoreContext,
  id: number,
  patch: {
    url?: string;
    description?: string;
    eventTypes?: readonly WebhookEventType[];
    secret?: string;
    previousSecret?: string | null;
    previousSecretUntil?: number | null;
    disabledAt?: number | null;
    disabledReason?: string | null;
  },
  now: number,
): Promise<WebhookEndpointRecord | undefined> {
  const enabling = patch.disabledAt === null;
  const row = await ctx.db
    .updateTable('webhook_endpoints')
    .set({
      updated_at: now,
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.eventTypes !== undefined && { event_types: JSON.stringify(patch.eventTypes) }),
      ...(patch.secret !== undefined && { secret: patch.secret }),
      ...(patch.previousSecret !== undefined && { previous_secret: patch.previousSecret }),
      ...(patch.previousSecretUntil !== undefined && { previous_secret_until: patch.previousSecretUntil }),
      ...(patch.disabledAt !== undefined && { disabled_at: patch.disabledAt }),
      ...(patch.disabledReason !== undefined && { disabled_reason: patch.disabledReason }),
      // Enabled again: its waiting messages are tried at once, from a clean slate.
      ...(enabling && { failures: 0, failing_since: null, next_attempt_at: 0 }),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && toEndpoint(row);
}

/**
 * Writes `events` to the outbox: a message for each endpoint of the event's account, and of the
 * operator, that takes its type (a disabled one's wait for it to be enabled). Call it in the transaction of the change that caused them, so
 * the change and its webhooks commit together or not at all.
 */
export async function enqueueWebhooks(
  ctx: StoreContext,
  events: readonly WebhookEvent[],
  now: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const accounts = [...new Set(['operator', ...events.flatMap((event) => event.owner ?? [])])];
  const endpoints = await ctx.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'account', 'event_types'])
    .where('account', 'in', accounts)
    // A disabled endpoint's messages are written too: they wait until it is enabled, none lost.
    .execute();
  if (endpoints.length === 0) return 0;
  const rows = events.flatMap((event) => {
    const body = webhookBody(event, now);
    return endpoints
      .filter((endpoint) => endpoint.account === 'operator' || endpoint.account === event.owner)
      .filter((endpoint) => (JSON.parse(endpoint.event_types) as string[]).includes(event.type))
      .map((endpoint) => ({
        message_id: newMessageId(),
        endpoint_id: Number(endpoint.id),
        event_type: event.type,
        payload: body,
        created_at: now,
      }));
  });
  for (let start = 0; start < rows.length; start += 200)
    await ctx.db
      .insertInto('webhook_messages')
      .values(rows.slice(start, start + 200))
      .execute();
  return rows.length;
}

/** A message for one endpoint alone (a test event), whatever types it takes. */
export async function enqueueWebhookFor(
  ctx: StoreContext,
  endpointId: number,
  event: WebhookEvent,
  now: number,
): Promise<WebhookMessageRecord> {
  const row = await ctx.db
    .insertInto('webhook_messages')
    .values({
      message_id: newMessageId(),
      endpoint_id: endpointId,
      event_type: event.type,
      payload: webhookBody(event, now),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toMessage(row);
}

/**
 * The webhook events audited changes cause, with their owners and what each may see: a campaign's
 * review and end, caps and budgets reached; an API key created, suspended or reinstated; statements
 * issued. Most changes cause none, and an import's thousands of entries are skipped unread.
 */
export async function webhookEventsOfAudit(
  ctx: StoreContext,
  entries: readonly AuditedChange[],
): Promise<WebhookEvent[]> {
  const events: WebhookEvent[] = [];
  for (const entry of entries) {
    if (entry.objectType === 'campaign') {
      const types = campaignEventTypes(entry);
      if (types.length === 0) continue;
      const campaign = await ctx.db
        .selectFrom('campaigns')
        .select(['id', 'advertiser_id', 'title', 'status', 'rejection_reason'])
        .where('id', '=', Number(entry.objectId))
        .executeTakeFirst();
      if (!campaign) continue;
      const data = {
        campaignId: Number(campaign.id),
        advertiserId: Number(campaign.advertiser_id),
        title: campaign.title,
        status: campaign.status,
        // The advertiser reads a rejection's reason on its campaign, and the system's own (an end
        // time, a cap, a budget); a person's note on another action is for the audit log only.
        reason:
          entry.action === 'reject'
            ? campaign.rejection_reason
            : ['complete', 'hold'].includes(entry.action)
              ? entry.reason
              : null,
      };
      for (const type of types) events.push({ type, owner: `advertiser:${data.advertiserId}`, data });
    } else if (entry.objectType === 'advertiser' && entry.action === 'hold') {
      const type = campaignEventTypes(entry)[0];
      if (type === undefined) continue;
      const advertiserId = Number(entry.objectId);
      events.push({
        type,
        owner: `advertiser:${advertiserId}`,
        data: { advertiserId, reason: entry.reason },
      });
    } else if (entry.objectType === 'api_key') {
      const types = keyEventTypes(entry);
      if (types.length === 0) continue;
      const key = await ctx.db
        .selectFrom('api_keys')
        .select(['id', 'partner_id', 'label', 'status'])
        .where('id', '=', Number(entry.objectId))
        .executeTakeFirst();
      if (!key) continue;
      const data = {
        keyId: Number(key.id),
        partnerId: Number(key.partner_id),
        label: key.label,
        status: key.status,
        reason: entry.reason,
      };
      for (const type of types) events.push({ type, owner: `partner:${data.partnerId}`, data });
    } else if (entry.objectType === 'statement' && entry.action === 'issue_statements') {
      const statements = await ctx.db
        .selectFrom('statements')
        .select(['id', 'kind', 'account_id', 'month', 'currency', 'total_micros', 'payable_micros'])
        .where('month', '=', entry.objectId)
        .orderBy('id')
        .execute();
      for (const statement of statements)
        events.push({
          type: 'statement.issued',
          owner: `${statement.kind}:${Number(statement.account_id)}`,
          data: {
            statementId: Number(statement.id),
            kind: statement.kind,
            accountId: Number(statement.account_id),
            month: statement.month,
            currency: statement.currency,
            totalMicros: Number(statement.total_micros),
            payableMicros: Number(statement.payable_micros),
          },
        });
    }
  }
  return events;
}

/**
 * Endpoints with a message waiting whose next attempt is due and that no instance has claimed,
 * oldest due first.
 */
export async function dueWebhookEndpoints(ctx: StoreContext, now: number, limit: number): Promise<number[]> {
  const rows = await ctx.db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('disabled_at', 'is', null)
    .where('next_attempt_at', '<=', now)
    .where('claimed_until', '<=', now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('webhook_messages')
          .select('webhook_messages.id')
          .whereRef('webhook_messages.endpoint_id', '=', 'webhook_endpoints.id')
          .where('webhook_messages.delivered_at', 'is', null),
      ),
    )
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((row) => Number(row.id));
}

/**
 * Claims an endpoint for `instance` until `until`, when no live claim holds it: one conditional
 * update, which both engines apply to one row at a time, so of two instances asking at once one
 * gets it. A claim that outlives its instance (killed mid-delivery) lapses at `until`.
 */
export async function claimWebhookEndpoint(
  ctx: StoreContext,
  id: number,
  instance: string,
  now: number,
  until: number,
): Promise<boolean> {
  const result = await ctx.db
    .updateTable('webhook_endpoints')
    .set({ claimed_until: until, claimed_by: instance })
    .where('id', '=', id)
    .where('claimed_until', '<=', now)
    // Another instance may have failed it since this one listed it due: its wait holds.
    .where('next_attempt_at', '<=', now)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends `instance`'s claim on an endpoint to `until`; false when it no longer holds it. */
export async function renewWebhookClaim(
  ctx: StoreContext,
  id: number,
  instance: string,
  until: number,
): Promise<boolean> {
  const result = await ctx.db
    .updateTable('webhook_endpoints')
    .set({ claimed_until: until })
    .where('id', '=', id)
    .where('claimed_by', '=', instance)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives up `instance`'s claim on an endpoint. */
export async function releaseWebhookEndpoint(ctx: StoreContext, id: number, instance: string): Promise<void> {
  await ctx.db
    .updateTable('webhook_endpoints')
    .set({ claimed_until: 0, claimed_by: null })
    .where('id', '=', id)
    .where('claimed_by', '=', instance)
    .execute();
}

/** An endpoint's messages not yet delivered, oldest first: the order they are delivered in. */
export async function waitingWebhookMessages(
  ctx: StoreContext,
  endpointId: number,
  limit: number,
): Promise<WebhookMessageRecord[]> {
  const rows = await ctx.db
    .selectFrom('webhook_messages')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('delivered_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toMessage);
}

/**
 * Records an attempt and what it means for its message and endpoint: delivered (the endpoint's
 * failures forgotten), or failed (`retryAt`: the endpoint's next attempt; `disable`: the reason it
 * is disabled, when its retry period is over).
 */
export async function recordWebhookAttempt(
  ctx: StoreContext,
  attempt: Omit<WebhookAttemptRecord, 'id'>,
  outcome: { delivered: true } | { delivered: false; retryAt: number; disable: string | null },
): Promise<void> {
  await ctx.db
    .insertInto('webhook_attempts')
    .values({
      message_id: attempt.messageId,
      endpoint_id: attempt.endpointId,
      at: attempt.at,
      status: attempt.status,
      duration_ms: attempt.durationMs,
      answer: attempt.answer,
      error: attempt.error,
      instance: attempt.instance,
    })
    .execute();
  await ctx.db
    .updateTable('webhook_messages')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      ...(outcome.delivered && { delivered_at: attempt.at }),
    }))
    .where('id', '=', attempt.messageId)
    .execute();
  await ctx.db
    .updateTable('webhook_endpoints')
    .set((eb) =>
      outcome.delivered
        ? { failures: 0, failing_since: null, next_attempt_at: 0 }
        : {
            failures: eb('failures', '+', 1),
            failing_since: eb.fn.coalesce('failing_since', eb.val(attempt.at)),
            next_attempt_at: outcome.retryAt,
            ...(outcome.disable !== null && { disabled_at: attempt.at, disabled_reason: outcome.disable }),
          },
    )
    .where('id', '=', attempt.endpointId)
    .execute();
}

/** A page of an endpoint's messages, newest first (`after`: the last id of the page before). */
export async function webhookMessages(
  ctx: StoreContext,
  endpointId: number,
  request: PageRequest,
): Promise<WebhookMessageRecord[]> {
  const query = ctx.db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId);
  return (await page(query, { ...request, newestFirst: true }, 'id').execute()).map(toMessage);
}

/** A message by its number, or by the `webhook-id` (`msg_…`) its deliveries carry. */
export async function getWebhookMessage(
  ctx: StoreContext,
  id: number | string,
): Promise<WebhookMessageRecord | undefined> {
  const row = await ctx.db
    .selectFrom('webhook_messages')
    .selectAll()
    .$if(typeof id === 'number', (q) => q.where('id', '=', id as number))
    .$if(typeof id === 'string', (q) => q.where('message_id', '=', id as string))
    .executeTakeFirst();
  return row && toMessage(row);
}

/** A message's attempts, oldest first. */
export async function webhookAttempts(ctx: StoreContext, messageId: number): Promise<WebhookAttemptRecord[]> {
  const rows = await ctx.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('message_id', '=', messageId)
    .orderBy('id')
    .execute();
  return rows.map(toAttempt);
}

/** Sends a message again: it waits for delivery once more, keeping its `webhook-id`. */
export async function replayWebhookMessage(ctx: StoreContext, id: number): Promise<void> {
  await ctx.db.updateTable('webhook_messages').set({ delivered_at: null }).where('id', '=', id).execute();
}

/** How long before a key expires its partner is told (`key.expiring`). */
export const KEY_EXPIRY_NOTICE_MS = 7 * 24 * 60 * 60_000;

/**
 * Writes `key.expiring` for each active key that expires within 7 days of `now` and was not told of
 * that expiry yet, in one transaction with its notice (whose key makes a second instance's attempt
 * write nothing). Returns how many keys were told.
 */
export async function noticeExpiringKeys(ctx: StoreContext, now: number): Promise<number> {
  const keys = await ctx.db
    .selectFrom('api_keys')
    .leftJoin('webhook_key_expiry_notices as notices', (join) =>
      join
        .onRef('notices.api_key_id', '=', 'api_keys.id')
        .onRef('notices.expires_at', '=', 'api_keys.expires_at'),
    )
    .select(['api_keys.id', 'api_keys.partner_id', 'api_keys.label', 'api_keys.expires_at'])
    .where('api_keys.status', '=', 'active')
    .where('api_keys.expires_at', '>', now)
    .where('api_keys.expires_at', '<=', now + KEY_EXPIRY_NOTICE_MS)
    .where('notices.api_key_id', 'is', null)
    .execute();
  let told = 0;
  for (const key of keys)
    await transact(ctx, async (tx) => {
      const noticed = await tx.db
        .insertInto('webhook_key_expiry_notices')
        .values({ api_key_id: Number(key.id), expires_at: Number(key.expires_at) })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(noticed.numInsertedOrUpdatedRows ?? 0) === 0) return;
      told++;
      const data = {
        keyId: Number(key.id),
        partnerId: Number(key.partner_id),
        label: key.label,
        expiresAt: new Date(Number(key.expires_at)).toISOString(),
      };
      await enqueueWebhooks(tx, [{ type: 'key.expiring', owner: `partner:${data.partnerId}`, data }], now);
    });
  return told;
}
