import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { RETRY_PERIOD_MS } from '../src/domain/webhook-retries.js';
import { WebhookDeliveryJob } from '../src/jobs/webhook-delivery-job.js';
import { AdvertiserService } from '../src/services/advertisers.js';
import { CLI_ACTOR } from '../src/services/audit.js';
import { CampaignService } from '../src/services/campaigns.js';
import { PartnerService } from '../src/services/partners.js';
import { WebhookService } from '../src/services/webhooks.js';
import type { Store } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { eachBlockStore, ENGINES, type TestDatabase } from './helpers/engines.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/** What a receiver got: each delivery's headers and body, in the order they arrived. */
interface Received {
  headers: Record<string, string>;
  body: string;
}

/**
 * A webhook receiver on loopback: records every delivery and answers what `answer` says (200 unless
 * it says otherwise), as a partner's or advertiser's server would.
 */
async function receiver(answer: (count: number) => number = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers as Record<string, string>, body });
      response.statusCode = answer(received.length);
      response.end(response.statusCode < 300 ? 'ok' : 'receiver down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const log = pino({ level: 'silent' });

/**
 * Verifies a delivery as a receiver with `secret` would, at the time it was sent: the library also
 * refuses a timestamp more than 5 minutes from its clock, and these tests move Placard's clock.
 */
function verify(secret: string, delivery: Received): unknown {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Number(delivery.headers['webhook-timestamp']) * 1000);
    return new Webhook(secret).verify(delivery.body, delivery.headers);
  } finally {
    vi.useRealTimers();
  }
}
const LOOPBACK = { loopback: true, privateNetworks: false };

describe.each(ENGINES)('webhooks on %s', (engine) => {
  let store: Store;
  let database: TestDatabase;
  eachBlockStore(engine, (opened) => ({ store, database } = opened));
  let now = Date.parse('2026-06-10T12:00:00Z');
  const clock = () => now;
  const webhooks = () => new WebhookService(store, CLI_ACTOR, clock, LOOPBACK);
  const job = (on: Store = store) =>
    new WebhookDeliveryJob(
      on,
      log,
      { allowLoopback: true, allowPrivateNetworks: false, random: () => 0.5 },
      clock,
    );

  /** Every message written for an endpoint, oldest first: type and data. */
  async function outbox(endpointId: number) {
    const messages = await store.webhookMessages(endpointId, { limit: 1000 });
    return messages.reverse().map((message) => ({
      type: message.eventType,
      data: (JSON.parse(message.payload) as { data: Record<string, unknown> }).data,
    }));
  }

  describe('the outbox', () => {
    let advertiser = 0;
    let other = 0;
    const endpoints = { operator: 0, advertiser: 0, other: 0, partner: 0 };
    beforeAll(async () => {
      advertiser = (await new AdvertiserService(store).create('Northwind')).id;
      other = (await new AdvertiserService(store).create('Contoso')).id;
      const partner = await new PartnerService(store).createPartner('Daily Planet');
      // Never delivered: disabled below, so the delivery tests' passes leave them be; their
      // messages are written all the same, waiting for them to be enabled.
      const url = 'https://hooks.outbox.invalid/unused';
      endpoints.operator = (await webhooks().create({ url, eventTypes: '*' })).id;
      endpoints.advertiser = (
        await webhooks().create({
          url,
          eventTypes: ['campaign.submitted', 'campaign.approved'],
          account: `advertiser:${advertiser}`,
        })
      ).id;
      endpoints.other = (
        await webhooks().create({ url, eventTypes: '*', account: `advertiser:${other}` })
      ).id;
      endpoints.partner = (
        await webhooks().create({
          url,
          eventTypes: 'key.created,key.suspended,key.reinstated',
          account: `partner:${partner.id}`,
        })
      ).id;
      for (const id of Object.values(endpoints)) await webhooks().disable(id);
    });

    it("writes a campaign's review for its advertiser's endpoints and the operator's, never another advertiser's", async () => {
      const campaigns = new CampaignService(store, CLI_ACTOR, clock);
      const campaign = await campaigns.create(advertiser, {
        title: 'Winter boots',
        destinationUrl: 'https://northwind.example/boots',
        placements: ['header_banner'],
      });
      await campaigns.act(campaign.id, 'submit');
      // A person's note on an approval is for the audit log, not the advertiser's webhook.
      await campaigns.act(campaign.id, 'approve', 'checked by the review team, see ticket 4411');
      const data = { campaignId: campaign.id, advertiserId: advertiser, title: 'Winter boots', reason: null };
      expect(await outbox(endpoints.advertiser)).toEqual([
        { type: 'campaign.submitted', data: { ...data, status: 'pending_review' } },
        { type: 'campaign.approved', data: { ...data, status: expect.any(String) as string } },
      ]);
      expect((await outbox(endpoints.operator)).map((message) => message.type)).toEqual([
        'campaign.submitted',
        'campaign.approved',
      ]);
      expect(await outbox(endpoints.other)).toEqual([]);
      expect(await outbox(endpoints.partner)).toEqual([]);
    });

    it("writes a key's creation, suspension and reinstatement for its partner", async () => {
      const partners = new PartnerService(store, CLI_ACTOR, clock);
      const { key } = await partners.createKey('Daily Planet', 'production');
      await partners.suspendKey(key.id, 'traffic from a data centre');
      await partners.reinstateKey(key.id);
      expect(
        (await outbox(endpoints.partner)).map((message) => [message.type, message.data['reason']]),
      ).toEqual([
        ['key.created', null],
        ['key.suspended', 'traffic from a data centre'],
        ['key.reinstated', null],
      ]);
    });

    it("writes a daily cap reached once for the held day, in the batch's commit", async () => {
      const { campaignIds } = await store.importCampaigns([
        { name: 'Northwind', campaigns: [campaignInput({ title: 'Capped', caps: { impressionsDaily: 2 } })] },
      ]);
      const campaignId = campaignIds[0];
      const source = await newPartnerKey(store, 'Capped partner', 'capped-digest');
      const impression = () => trackedEvent({ ...source, campaignId, occurredAt: now, mayHitCap: true });
      await store.insertEvents([impression()]);
      expect(await outbox(endpoints.advertiser)).not.toContainEqual(
        expect.objectContaining({ type: 'campaign.cap_reached' }),
      );
      await store.insertEvents([impression()]);
      // A late event of the held day holds nothing new, and tells no one again.
      await store.insertEvents([impression()]);
      const capped = (await outbox(endpoints.operator)).filter(
        (message) => message.type === 'campaign.cap_reached',
      );
      expect(capped).toEqual([
        {
          type: 'campaign.cap_reached',
          data: expect.objectContaining({
            campaignId,
            advertiserId: advertiser,
            reason: 'daily cap reached',
          }) as unknown,
        },
      ]);
    });

    it('tells a partner once that a key expires within 7 days, and again for a new expiry', async () => {
      const partner = (await store.findPartner('Daily Planet'))!;
      const key = await store.createApiKey({
        partnerId: partner.id,
        label: 'rotating',
        displayPrefix: 'e',
        digest: 'expiring',
      });
      const DAY = 86_400_000;
      const expiring = async () =>
        (await outbox(endpoints.partner)).filter((message) => message.type === 'key.expiring').length;
      // Not subscribed to key.expiring: the operator's endpoint (every type) is the one told.
      const told = async () =>
        (await outbox(endpoints.operator)).filter(
          (message) => message.type === 'key.expiring' && message.data['keyId'] === key.id,
        );
      await store.updateApiKey(key.id, { expiresAt: now + 8 * DAY });
      expect(await store.noticeExpiringKeys(now)).toBe(0);
      await store.updateApiKey(key.id, { expiresAt: now + 6 * DAY });
      expect(await store.noticeExpiringKeys(now)).toBe(1);
      expect(await store.noticeExpiringKeys(now + 60_000)).toBe(0);
      expect(await told()).toEqual([
        {
          type: 'key.expiring',
          data: {
            keyId: key.id,
            partnerId: partner.id,
            label: 'rotating',
            expiresAt: new Date(now + 6 * DAY).toISOString(),
          },
        },
      ]);
      await store.updateApiKey(key.id, { expiresAt: now + 5 * DAY });
      expect(await store.noticeExpiringKeys(now)).toBe(1);
      expect(await told()).toHaveLength(2);
      expect(await expiring()).toBe(0);
    });

    it('writes nothing when the change that caused it rolls back', async () => {
      const before = (await outbox(endpoints.operator)).length;
      const partners = new PartnerService(store, CLI_ACTOR, clock);
      const failing = store.transaction(async (tx) => {
        await new PartnerService(tx, CLI_ACTOR, clock).createKey('Daily Planet', 'rolled back');
        throw new Error('the change fails after its audit entry');
      });
      await expect(failing).rejects.toThrow('the change fails');
      expect((await outbox(endpoints.operator)).length).toBe(before);
      await partners.createKey('Daily Planet', 'kept');
      expect((await outbox(endpoints.operator)).length).toBe(before + 1);
    });
  });

  describe('delivery', () => {
    it('signs each delivery so that a Standard Webhooks library verifies it, and sends each message once', async () => {
      const hooks = await receiver();
      try {
        const created = await webhooks().create({ url: hooks.url, eventTypes: ['webhook.test'] });
        const first = await webhooks().sendTest(created.id);
        const second = await webhooks().sendTest(created.id);
        expect(await job().runOnce()).toBe(2);
        expect(await job().runOnce()).toBe(0);
        expect(hooks.received.map((delivery) => delivery.headers['webhook-id'])).toEqual([
          first.webhookId,
          second.webhookId,
        ]);
        for (const delivery of hooks.received) {
          const verified = verify(created.secret, delivery) as { type: string };
          expect(verified.type).toBe('webhook.test');
        }
        const stranger = new WebhookService(store, CLI_ACTOR, clock, LOOPBACK);
        const otherSecret = (await stranger.create({ url: hooks.url, eventTypes: ['webhook.test'] })).secret;
        // Another endpoint's secret does not verify it: the check above could fail.
        expect(() => verify(otherSecret, hooks.received[0])).toThrow('No matching signature found');
        const attempts = await webhooks().message(first.id);
        expect(attempts.deliveredAt).not.toBeNull();
        expect(attempts.attemptLog).toEqual([
          expect.objectContaining({ status: 200, error: null, answer: 'ok' }),
        ]);
      } finally {
        await hooks.close();
      }
    });

    it('signs with the previous secret too during a rotation, so receivers on either verify', async () => {
      const hooks = await receiver();
      try {
        const created = await webhooks().create({ url: hooks.url, eventTypes: ['webhook.test'] });
        const rotated = await webhooks().rotateSecret(created.id);
        await webhooks().sendTest(created.id);
        await job().runOnce();
        const [delivery] = hooks.received;
        expect(delivery.headers['webhook-signature'].split(' ')).toHaveLength(2);
        for (const secret of [created.secret, rotated.secret])
          expect(() => verify(secret, delivery)).not.toThrow();
        // After the overlap, only the new secret signs.
        now += 25 * 3_600_000;
        await webhooks().sendTest(created.id);
        await job().runOnce();
        const later = hooks.received[1];
        expect(() => verify(created.secret, later)).toThrow();
        expect(() => verify(rotated.secret, later)).not.toThrow();
      } finally {
        await hooks.close();
      }
    });

    it('retries a failing receiver with backoff and resumes in the order the messages were written', async () => {
      const hooks = await receiver((count) => (count <= 3 ? 503 : 200));
      try {
        const created = await webhooks().create({ url: hooks.url, eventTypes: ['webhook.test'] });
        const sent = [];
        for (let i = 0; i < 4; i++) sent.push((await webhooks().sendTest(created.id)).webhookId);
        expect(await job().runOnce()).toBe(0); // the first fails: nothing after it is tried
        expect(await job().runOnce()).toBe(0); // not due yet: no attempt at all
        // Nor can another instance claim it before its wait is over, whatever list it read.
        expect(await store.claimWebhookEndpoint(created.id, 'another', now, now + 30_000)).toBe(false);
        expect(hooks.received).toHaveLength(1);
        const waiting = await webhooks().get(created.id);
        expect(waiting.failures).toBe(1);
        // 5 s after the first failure (jitter at its middle), then 30 s after the second.
        expect(Date.parse(waiting.nextAttemptAt!)).toBe(now + 5_000);
        now += 5_000;
        expect(await job().runOnce()).toBe(0);
        now += 30_000;
        expect(await job().runOnce()).toBe(0);
        now += 120_000;
        expect(await job().runOnce()).toBe(4);
        expect(hooks.received.map((delivery) => delivery.headers['webhook-id'])).toEqual([
          sent[0],
          sent[0],
          sent[0],
          sent[0],
          sent[1],
          sent[2],
          sent[3],
        ]);
        expect((await webhooks().get(created.id)).failures).toBe(0);
      } finally {
        await hooks.close();
      }
    });

    it('disables an endpoint that failed for the whole retry period, and tells the operator', async () => {
      const hooks = await receiver(() => 500);
      const toldOf = await receiver();
      try {
        await webhooks().create({ url: toldOf.url, eventTypes: ['endpoint.disabled'] });
        const failing = await webhooks().create({
          url: hooks.url,
          eventTypes: ['webhook.test'],
          account: 'operator',
        });
        await webhooks().sendTest(failing.id);
        const start = now;
        // Past the retry period by more than the longest wait, so the attempt after it comes.
        while (now - start <= RETRY_PERIOD_MS + 10 * 3_600_000) {
          await job().runOnce();
          now += 3_600_000;
        }
        const disabled = await webhooks().get(failing.id);
        expect(disabled.enabled).toBe(false);
        expect(disabled.disabledReason).toMatch(/^failed for 3 days, since .*: answered 500$/);
        // About 16 attempts in three days, not one a second.
        expect(hooks.received.length).toBeGreaterThan(10);
        expect(hooks.received.length).toBeLessThan(25);
        await job().runOnce();
        // Other endpoints of this store that failed as long are disabled too; each is told once.
        const told = toldOf.received.map(
          (delivery) => JSON.parse(delivery.body) as { type: string; data: { endpointId: number } },
        );
        expect(told.filter((message) => message.data.endpointId === failing.id)).toEqual([
          expect.objectContaining({ type: 'endpoint.disabled' }),
        ]);
      } finally {
        await hooks.close();
        await toldOf.close();
      }
    });

    it('delivers each message once when two instances deliver at the same time', async () => {
      const hooks = await receiver();
      const second = await database.open();
      try {
        const created = await webhooks().create({ url: hooks.url, eventTypes: ['webhook.test'] });
        for (let i = 0; i < 30; i++) await webhooks().sendTest(created.id);
        const [a, b] = await Promise.all([job().runOnce(), job(second).runOnce()]);
        expect(a + b).toBe(30);
        const ids = hooks.received.map((delivery) => delivery.headers['webhook-id']);
        expect(new Set(ids).size).toBe(30);
        expect(ids).toHaveLength(30);
      } finally {
        await second.close();
        await hooks.close();
      }
    });
  });
});
