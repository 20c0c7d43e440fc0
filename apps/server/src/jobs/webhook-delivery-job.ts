import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { retryPeriodOver, retryWaitMs } from '../domain/webhook-retries.js';
import { webhookHeaders } from '../domain/webhook-signatures.js';
import {
  sendWebhook,
  type SendOptions,
  type SendResult,
  type WebhookRequest,
} from '../services/webhook-sender.js';
import type { Store, WebhookEndpointRecord, WebhookMessageRecord } from '../store/store.js';
import { PeriodicJob } from './periodic.js';

/** How often the outbox is looked at: a webhook leaves about a second after its change commits. */
const DELIVERY_INTERVAL_MS = 1_000;
/** How many endpoints one pass serves, and how many messages of each, before the next pass. */
const ENDPOINTS_PER_PASS = 20;
const MESSAGES_PER_ENDPOINT = 50;
/**
 * How long an instance's claim on an endpoint lasts. It is renewed before each attempt, and an
 * attempt ends within the sender's 10 s deadline, so a live claim never lapses; the claim of an
 * instance killed mid-delivery lapses within this, and another instance delivers what is left
 * (the message in flight again: at least once, with the same `webhook-id`).
 */
const CLAIM_MS = 30_000;

export interface WebhookDeliveryOptions {
  /** Loopback and private addresses allowed (`PLACARD_WEBHOOKS_ALLOW_LOOPBACK`, `…_ALLOW_PRIVATE`). */
  allowLoopback: boolean;
  allowPrivateNetworks: boolean;
  /** Each attempt's deadline (default the sender's, 10 s). */
  timeoutMs?: number;
  intervalMs?: number;
  /** Replaces the sender (tests); the product's refuses private addresses and follows no redirect. */
  send?: (request: WebhookRequest, options: SendOptions) => Promise<SendResult>;
  random?: () => number;
}

/**
 * Delivers the webhook outbox (D19). Each pass takes the endpoints with a message due, claims each
 * (one instance at a time per endpoint, so one delivery in flight per message across instances),
 * and sends its waiting messages oldest first, signed per Standard Webhooks, stopping at the first
 * failure: the endpoint waits (`domain/webhook-retries.ts`) and then resumes from that same message,
 * so each endpoint receives its messages in the order they were written. An endpoint failing for
 * the whole retry period is disabled, and the operator told by an `endpoint.disabled` webhook.
 */
export class WebhookDeliveryJob extends PeriodicJob {
  /** This instance's name in claims and attempts: the process and a random part. */
  readonly instance = `${process.pid}-${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'error' | 'warn'>,
    private readonly options: WebhookDeliveryOptions,
    private readonly clock: () => number = Date.now,
  ) {
    const interval = options.intervalMs ?? DELIVERY_INTERVAL_MS;
    super(interval, log, 'delivering webhooks failed', interval);
  }

  private lastExpiryPass = -Infinity;

  /** One pass; returns how many messages were delivered. */
  async runOnce(): Promise<number> {
    // Keys about to expire: looked for once a minute, which is soon enough for a 7-day notice.
    if (this.clock() - this.lastExpiryPass >= 60_000) {
      this.lastExpiryPass = this.clock();
      await this.store.noticeExpiringKeys(this.lastExpiryPass);
    }
    let delivered = 0;
    for (const id of await this.store.dueWebhookEndpoints(this.clock(), ENDPOINTS_PER_PASS)) {
      const now = this.clock();
      if (!(await this.store.claimWebhookEndpoint(id, this.instance, now, now + CLAIM_MS))) continue;
      try {
        delivered += await this.deliverTo(id);
      } finally {
        await this.store.releaseWebhookEndpoint(id, this.instance);
      }
    }
    return delivered;
  }

  /** Sends an endpoint's waiting messages in order until one fails; returns how many were delivered. */
  private async deliverTo(id: number): Promise<number> {
    let delivered = 0;
    for (const message of await this.store.waitingWebhookMessages(id, MESSAGES_PER_ENDPOINT)) {
      if (this.stopping) break;
      const now = this.clock();
      if (!(await this.store.renewWebhookClaim(id, this.instance, now + CLAIM_MS))) break;
      // Read before each attempt: the last one's success reset its failures, a person may have
      // disabled it or rotated its secret meanwhile.
      const endpoint = await this.store.getWebhookEndpoint(id);
      if (!endpoint || endpoint.disabledAt !== null) break;
      if (!(await this.attempt(endpoint, message))) break;
      delivered++;
    }
    return delivered;
  }

  private async attempt(endpoint: WebhookEndpointRecord, message: WebhookMessageRecord): Promise<boolean> {
    const at = this.clock();
    const secrets =
      endpoint.previousSecret !== null && (endpoint.previousSecretUntil ?? 0) > at
        ? [endpoint.secret, endpoint.previousSecret]
        : [endpoint.secret];
    const send = this.options.send ?? sendWebhook;
    const result = await send(
      {
        url: endpoint.url,
        headers: webhookHeaders(secrets, message.messageId, at, message.payload),
        body: message.payload,
      },
      {
        // The operator's allowances open the operator's own endpoints only (services/webhooks.ts).
        allowLoopback: this.options.allowLoopback && endpoint.account === 'operator',
        allowPrivateNetworks: this.options.allowPrivateNetworks && endpoint.account === 'operator',
        ...(this.options.timeoutMs !== undefined && { timeoutMs: this.options.timeoutMs }),
      },
    );
    const attempt = {
      messageId: message.id,
      endpointId: endpoint.id,
      at,
      status: result.status,
      durationMs: Math.round(result.durationMs),
      answer: result.answer,
      error: result.error,
      instance: this.instance,
    };
    if (result.ok) {
      await this.store.recordWebhookAttempt(attempt, { delivered: true });
      return true;
    }
    const failingSince = endpoint.failingSince ?? at;
    const over = retryPeriodOver(failingSince, at);
    const disable = over
      ? `failed for 3 days, since ${new Date(failingSince).toISOString()}: ${describe(result)}`
      : null;
    const random = this.options.random ?? Math.random;
    await this.store.transaction(async (tx) => {
      await tx.recordWebhookAttempt(attempt, {
        delivered: false,
        retryAt: at + retryWaitMs(endpoint.failures + 1, random()),
        disable,
      });
      if (disable !== null)
        await tx.enqueueWebhooks(
          [
            {
              type: 'endpoint.disabled',
              owner: null,
              data: {
                endpointId: endpoint.id,
                account: endpoint.account,
                url: endpoint.url,
                reason: disable,
              },
            },
          ],
          at,
        );
    });
    if (disable !== null)
      this.log.warn({ endpoint: endpoint.id, url: endpoint.url }, `webhook endpoint disabled: ${disable}`);
    return false;
  }
}

/** What a failed attempt got, in a few words. */
const describe = (result: SendResult): string =>
  result.error ?? (result.status === null ? 'no answer' : `answered ${result.status}`);
