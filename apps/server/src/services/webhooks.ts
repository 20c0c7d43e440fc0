import { accountLabel, type Account } from '../domain/accounts.js';
import { alreadyDone, DomainError, invalidField, notFound } from '../domain/errors.js';
import { webhookUrlProblem, type AddressAllowance } from '../domain/webhook-addresses.js';
import { checkEventTypes } from '../domain/webhook-events.js';
import { newWebhookSecret } from '../domain/webhook-signatures.js';
import type {
  PageRequest,
  Store,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookMessageRecord,
} from '../store/store.js';
import { audit, CLI_ACTOR, type Actor } from './audit.js';
import { requireChange, resolveAccount, seesAccount, storedAccount } from './scope.js';

/** How long a rotated-out secret still signs deliveries beside the new one: a day to switch receivers. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60_000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An endpoint as people and scripts read it: never its secrets (shown once, on creation and rotation). */
export function webhookEndpointView(endpoint: WebhookEndpointRecord, now: number) {
  return {
    id: endpoint.id,
    account: endpoint.account,
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes,
    enabled: endpoint.disabledAt === null,
    disabledAt: iso(endpoint.disabledAt),
    disabledReason: endpoint.disabledReason,
    failingSince: iso(endpoint.failingSince),
    failures: endpoint.failures,
    nextAttemptAt: endpoint.failures > 0 ? iso(endpoint.nextAttemptAt) : null,
    previousSecretUntil: iso(
      endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now
        ? endpoint.previousSecretUntil
        : null,
    ),
    createdAt: iso(endpoint.createdAt),
    createdBy: endpoint.createdBy,
  };
}

export type WebhookEndpointView = ReturnType<typeof webhookEndpointView>;

export function webhookMessageView(message: WebhookMessageRecord) {
  return {
    id: message.id,
    webhookId: message.messageId,
    endpointId: message.endpointId,
    eventType: message.eventType,
    createdAt: iso(message.createdAt),
    attempts: message.attempts,
    deliveredAt: iso(message.deliveredAt),
    payload: JSON.parse(message.payload) as unknown,
  };
}

export function webhookAttemptView(attempt: WebhookAttemptRecord) {
  return {
    id: attempt.id,
    at: iso(attempt.at),
    status: attempt.status,
    durationMs: attempt.durationMs,
    answer: attempt.answer,
    error: attempt.error,
  };
}

/**
 * Webhook endpoints (D19): each account's people (and tokens) register theirs, the operator any
 * account's; readers of the account see them, its admins and managers change them. A secret is
 * shown once, when made; every change is audited on the endpoint.
 */
export class WebhookService {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor = CLI_ACTOR,
    private readonly clock: () => number = Date.now,
    /** Where deliveries may go besides public addresses (`PLACARD_WEBHOOKS_ALLOW_*`). */
    private readonly allowance: AddressAllowance = { loopback: false, privateNetworks: false },
  ) {}

  /** The endpoints the actor may see: the operator every account's, others their own account's. */
  async list(): Promise<WebhookEndpointView[]> {
    const account = this.actor.account.kind === 'operator' ? undefined : accountLabel(this.actor.account);
    return (await this.store.listWebhookEndpoints(account)).map((endpoint) =>
      webhookEndpointView(endpoint, this.clock()),
    );
  }

  async get(id: number): Promise<WebhookEndpointView> {
    return webhookEndpointView(await this.visible(this.store, id), this.clock());
  }

  /** The endpoint, or not found when it does not exist or belongs to an account the actor may not see. */
  private async visible(store: Store, id: number): Promise<WebhookEndpointRecord> {
    const endpoint = await store.getWebhookEndpoint(id);
    if (!endpoint || !seesAccount(this.actor, storedAccount(endpoint.account)))
      throw notFound(`webhook endpoint ${id} not found`);
    return endpoint;
  }

  /**
   * The URL checked for an endpoint of `account`. The operator's allowances (loopback, private
   * networks) open only the operator's own endpoints: an advertiser's or partner's endpoint could
   * otherwise reach into the operator's network and read the answers in its attempt log.
   */
  private checkUrl(value: unknown, account: string): string {
    if (typeof value !== 'string' || value.trim() === '') throw invalidField('url', 'is required');
    const allowance = account === 'operator' ? this.allowance : { loopback: false, privateNetworks: false };
    const url = value.trim();
    const problem = webhookUrlProblem(url, allowance);
    if (problem !== null) throw invalidField('url', problem);
    return url;
  }

  private static description(value: unknown): string {
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string' || value.length > 500)
      throw invalidField('description', 'must be text of at most 500 characters');
    return value.trim();
  }

  /**
   * Registers an endpoint for the actor's account, or (the operator) for `account` (`operator`,
   * `advertiser:<id or name>`, `partner:<id or name>`). Returns it with its secret, shown this once.
   */
  async create(input: {
    url?: unknown;
    eventTypes?: unknown;
    description?: unknown;
    account?: unknown;
  }): Promise<WebhookEndpointView & { secret: string }> {
    requireChange(this.actor);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const account: Account =
        input.account === undefined || input.account === null
          ? this.actor.account
          : await resolveAccount(tx, this.actor, input.account);
      // `resolveAccount` hides other advertisers and partners; the operator's account it names to anyone.
      if (!seesAccount(this.actor, account))
        throw new DomainError(
          'forbidden',
          "only the operator registers endpoints for the operator's account",
        );
      const url = this.checkUrl(input.url, accountLabel(account));
      const eventTypes = checkEventTypes(input.eventTypes, account.kind);
      const secret = newWebhookSecret();
      const endpoint = await tx.createWebhookEndpoint(
        {
          account: accountLabel(account),
          url,
          description: WebhookService.description(input.description),
          eventTypes,
          secret,
          createdBy: this.actor.id,
        },
        now,
      );
      const view = webhookEndpointView(endpoint, this.clock());
      await audit(
        tx,
        this.actor,
        {
          objectType: 'webhook_endpoint',
          objectId: endpoint.id,
          action: 'create',
          before: null,
          after: view,
        },
        now,
      );
      return { ...view, secret };
    });
  }

  /** Applies a change to one endpoint the actor may change, audited. */
  private change(
    id: number,
    action: string,
    patch: (before: WebhookEndpointRecord) => Parameters<Store['updateWebhookEndpoint']>[1],
  ): Promise<WebhookEndpointRecord> {
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      // Another account's endpoint reads as missing, before the role's refusal could tell it exists.
      const before = await this.visible(tx, id);
      requireChange(this.actor);
      const after = (await tx.updateWebhookEndpoint(id, patch(before), now))!;
      await audit(
        tx,
        this.actor,
        {
          objectType: 'webhook_endpoint',
          objectId: id,
          action,
          before: webhookEndpointView(before, this.clock()),
          after: webhookEndpointView(after, this.clock()),
        },
        now,
      );
      return after;
    });
  }

  /** Changes an endpoint's URL, event types or description (only those given). */
  async update(id: number, input: { url?: unknown; eventTypes?: unknown; description?: unknown }) {
    const endpoint = await this.change(id, 'update', (before) => ({
      ...(input.url !== undefined && { url: this.checkUrl(input.url, before.account) }),
      ...(input.eventTypes !== undefined && {
        eventTypes: checkEventTypes(input.eventTypes, storedAccount(before.account).kind),
      }),
      ...(input.description !== undefined && { description: WebhookService.description(input.description) }),
    }));
    return webhookEndpointView(endpoint, this.clock());
  }

  /** Stops deliveries to an endpoint; its messages wait. */
  async disable(id: number) {
    const now = this.clock();
    return webhookEndpointView(
      await this.change(id, 'disable', (before) => {
        if (before.disabledAt !== null) throw alreadyDone(`webhook endpoint ${id} is already disabled`);
        return { disabledAt: now, disabledReason: `disabled by ${this.actor.id}` };
      }),
      now,
    );
  }

  /** Delivers to an endpoint again, from its oldest waiting message, failures forgotten. */
  async enable(id: number) {
    return webhookEndpointView(
      await this.change(id, 'enable', (before) => {
        if (before.disabledAt === null) throw alreadyDone(`webhook endpoint ${id} is already enabled`);
        return { disabledAt: null, disabledReason: null };
      }),
      this.clock(),
    );
  }

  /**
   * A new secret, shown this once. For `ROTATION_OVERLAP_MS` deliveries carry a signature with the
   * previous secret too, so receivers can switch without refusing any.
   */
  async rotateSecret(id: number): Promise<WebhookEndpointView & { secret: string }> {
    const now = this.clock();
    const secret = newWebhookSecret();
    const endpoint = await this.change(id, 'rotate_secret', (before) => ({
      secret,
      previousSecret: before.secret,
      previousSecretUntil: now + ROTATION_OVERLAP_MS,
    }));
    return { ...webhookEndpointView(endpoint, this.clock()), secret };
  }

  /** Writes a `webhook.test` message for the endpoint, delivered like any other. */
  async sendTest(id: number) {
    const now = this.clock();
    const endpoint = await this.visible(this.store, id);
    requireChange(this.actor);
    const message = await this.store.enqueueWebhookFor(
      endpoint.id,
      {
        type: 'webhook.test',
        owner: endpoint.account,
        data: { endpointId: endpoint.id, requestedBy: this.actor.id },
      },
      now,
    );
    return webhookMessageView(message);
  }

  /** An endpoint's messages, newest first, with their delivery. */
  async messages(id: number, request: PageRequest) {
    const endpoint = await this.visible(this.store, id);
    return (await this.store.webhookMessages(endpoint.id, request)).map(webhookMessageView);
  }

  /** `messageId`: its number, or the `webhook-id` (`msg_…`) its deliveries carry. */
  private async visibleMessage(messageId: number | string): Promise<WebhookMessageRecord> {
    const message = await this.store.getWebhookMessage(messageId);
    if (message) {
      const endpoint = await this.store.getWebhookEndpoint(message.endpointId);
      if (endpoint && seesAccount(this.actor, storedAccount(endpoint.account))) return message;
    }
    throw notFound(`webhook message ${messageId} not found`);
  }

  /** A message (by its number or its `msg_…` webhook-id) with every attempt to deliver it. */
  async message(messageId: number | string) {
    const message = await this.visibleMessage(messageId);
    const attempts = await this.store.webhookAttempts(message.id);
    return { ...webhookMessageView(message), attemptLog: attempts.map(webhookAttemptView) };
  }

  /** Sends a message again (same `webhook-id`), after whatever its endpoint still has waiting before it. */
  async replay(messageId: number | string) {
    const message = await this.visibleMessage(messageId);
    requireChange(this.actor);
    await this.store.replayWebhookMessage(message.id);
    return this.message(message.id);
  }
}
