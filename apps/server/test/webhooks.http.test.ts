import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

/**
 * Webhook endpoints through the management API (D19): the secret is answered once; each account
 * sees and changes only its own endpoints and may not subscribe to the operator's events; a URL
 * that could reach inside the network is refused with the reason; messages, attempts and replays.
 * Every answer is checked against the API document (helpers/app.ts).
 */
describe.each(ENGINES)('webhooks through the management API on %s', (engine) => {
  let t: TestApp;
  afterEach(() => t?.close());

  const scoped = async (account: string, role: string) =>
    (await t.services.tokens.create({ label: `${account} ${role}`, account, role })).plaintext;

  it('registers an endpoint, answers its secret once, and lists and reads it without', async () => {
    t = await createTestApp({ engine });
    const created = await t.admin('POST', '/webhooks', {
      url: 'https://hooks.example.com/placard',
      eventTypes: ['campaign.approved', 'key.suspended'],
      description: 'Review outcomes',
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json().data;
    expect(endpoint).toEqual(
      expect.objectContaining({
        account: 'operator',
        url: 'https://hooks.example.com/placard',
        eventTypes: ['campaign.approved', 'key.suspended'],
        enabled: true,
        failures: 0,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      }),
    );
    const read = await t.admin('GET', `/webhooks/${endpoint.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).not.toHaveProperty('secret');
    expect(read.body).not.toContain(endpoint.secret);
    const list = await t.admin('GET', '/webhooks');
    expect(list.json().data.map((one: { id: number }) => one.id)).toEqual([endpoint.id]);
    expect(list.body).not.toContain(endpoint.secret);

    const rotated = await t.admin('POST', `/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().data.secret).not.toBe(endpoint.secret);
    expect(rotated.json().data.previousSecretUntil).not.toBeNull();

    const audit = await t.admin('GET', `/audit?objectType=webhook_endpoint&objectId=${endpoint.id}`);
    expect(audit.json().data.map((entry: { action: string }) => entry.action)).toEqual([
      'create',
      'rotate_secret',
    ]);
    // The audit log never holds a secret either.
    expect(audit.body).not.toContain(endpoint.secret);
    expect(audit.body).not.toContain(rotated.json().data.secret);
  });

  it('refuses a URL that could reach this machine or its network, naming why', async () => {
    t = await createTestApp({ engine });
    for (const [url, why] of [
      ['http://hooks.example.com/', 'must use https'],
      ['https://127.0.0.1/', 'loopback'],
      ['https://169.254.169.254/latest/meta-data', 'metadata'],
      ['https://10.0.0.8/', 'private'],
      ['https://localhost:3000/', 'this machine'],
      ['https://user:pass@hooks.example.com/', 'user name or password'],
    ]) {
      const refused = await t.admin('POST', '/webhooks', { url, eventTypes: ['*'] });
      expect(refused.statusCode, `${url}: ${refused.body}`).toBe(400);
      expect(refused.json().message + JSON.stringify(refused.json().problems)).toContain(why);
    }
    const unknown = await t.admin('POST', '/webhooks', {
      url: 'https://hooks.example.com/',
      eventTypes: ['campaign.exploded'],
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('unknown event types: campaign.exploded');
    // Every problem at once, each worded to follow the field's name.
    const both = await t.admin('POST', '/webhooks', { url: 'http://10.0.0.1/', eventTypes: ['*'] });
    expect(both.json().message).toMatch(
      /^url must use https, and must not go to 10\.0\.0\.1, a private address: plain http goes only to this machine; /,
    );
  });

  it('subscribes an account to exactly the types it is sent, and refuses any other by name', async () => {
    t = await createTestApp({ engine });
    const partner = await t.partners.findPartner('Test Partner');
    const advertiser = (await t.admin('POST', '/advertisers', { name: 'Hook Advertiser' })).json().data;
    const all = async (account: string) =>
      (
        await t.admin('POST', '/webhooks', { url: 'https://hooks.example.com/', eventTypes: ['*'], account })
      ).json().data.eventTypes;
    expect(await all(`advertiser:${advertiser.id}`)).toEqual([
      'campaign.submitted',
      'campaign.approved',
      'campaign.rejected',
      'campaign.completed',
      'campaign.cap_reached',
      'campaign.budget_reached',
      'statement.issued',
      'webhook.test',
    ]);
    expect(await all(`partner:${partner.id}`)).toEqual([
      'key.created',
      'key.flagged',
      'key.suspended',
      'key.reinstated',
      'key.expiring',
      'statement.issued',
      'webhook.test',
    ]);
    const refused = await t.admin('POST', '/webhooks', {
      url: 'https://hooks.example.com/',
      eventTypes: ['campaign.approved', 'key.created', 'flag.raised'],
      account: `advertiser:${advertiser.id}`,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(
      /^eventTypes must list only types an advertiser is sent, not key\.created, flag\.raised; advertisers are sent campaign\.submitted, /,
    );
    const own = (
      await t.admin('POST', '/webhooks', {
        url: 'https://hooks.example.com/',
        eventTypes: ['key.created'],
        account: `partner:${partner.id}`,
      })
    ).json().data;
    const changed = await t.admin('PATCH', `/webhooks/${own.id}`, { eventTypes: ['campaign.approved'] });
    expect(changed.statusCode).toBe(400);
    expect(changed.json().message).toContain('not campaign.approved');
  });

  it('reads an endpoint stored with types its account is never sent as the types it is sent', async () => {
    t = await createTestApp({ engine });
    const advertiser = (await t.admin('POST', '/advertisers', { name: 'Older Advertiser' })).json().data;
    // As an advertiser's `*` was stored before it meant the types an advertiser is sent.
    const stored = await t.store.createWebhookEndpoint(
      {
        account: `advertiser:${advertiser.id}`,
        url: 'https://hooks.example.com/',
        description: '',
        eventTypes: ['campaign.approved', 'key.created', 'flag.raised', 'statement.issued'],
        secret: 'whsec_' + Buffer.alloc(32).toString('base64'),
        createdBy: 'test',
      },
      Date.now(),
    );
    const read = await t.admin('GET', `/webhooks/${stored.id}`);
    expect(read.json().data.eventTypes).toEqual(['campaign.approved', 'statement.issued']);
  });

  it("keeps each account to its own endpoints and out of the operator's events", async () => {
    t = await createTestApp({ engine });
    const partner = await t.partners.findPartner('Test Partner');
    const partnerAdmin = await scoped(`partner:${partner.id}`, 'admin');
    const reporter = await scoped(`partner:${partner.id}`, 'reporter');
    const own = await t.admin(
      'POST',
      '/webhooks',
      { url: 'https://hooks.example.com/p', eventTypes: ['*'] },
      partnerAdmin,
    );
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().data.account).toBe(`partner:${partner.id}`);
    expect(own.json().data.eventTypes).not.toContain('flag.raised');
    expect(own.json().data.eventTypes).not.toContain('campaign.approved');
    const operatorOnly = await t.admin(
      'POST',
      '/webhooks',
      { url: 'https://hooks.example.com/p', eventTypes: ['flag.raised'] },
      partnerAdmin,
    );
    expect(operatorOnly.statusCode).toBe(400);
    expect(operatorOnly.json().message).toMatch(
      /^eventTypes must list only types a partner is sent, not flag\.raised; /,
    );
    const operators = await t.admin('POST', '/webhooks', {
      url: 'https://hooks.example.com/o',
      eventTypes: ['*'],
    });
    const hidden = await t.admin('GET', `/webhooks/${operators.json().data.id}`, undefined, partnerAdmin);
    expect(hidden.statusCode).toBe(404);
    const listed = await t.admin('GET', '/webhooks', undefined, partnerAdmin);
    expect(listed.json().data.map((one: { id: number }) => one.id)).toEqual([own.json().data.id]);
    const byReporter = await t.admin('POST', `/webhooks/${own.json().data.id}/disable`, undefined, reporter);
    expect(byReporter.statusCode).toBe(403);
    const forAnother = await t.admin(
      'POST',
      '/webhooks',
      { url: 'https://hooks.example.com/x', eventTypes: ['*'], account: 'operator' },
      partnerAdmin,
    );
    expect(forAnother.statusCode).toBe(403);
  });

  it('sends a test event, lists it with its attempts, and replays it with the same webhook-id', async () => {
    t = await createTestApp({ engine, webhooksAllowLoopback: true });
    const endpoint = (
      await t.admin('POST', '/webhooks', { url: 'http://127.0.0.1:9/placard', eventTypes: ['webhook.test'] })
    ).json().data;
    // The operator's allowance of loopback opens the operator's own endpoints only.
    const partner = await t.partners.findPartner('Test Partner');
    const partnerAdmin = await scoped(`partner:${partner.id}`, 'admin');
    const tenant = await t.admin(
      'POST',
      '/webhooks',
      { url: 'http://127.0.0.1:9/placard', eventTypes: ['*'] },
      partnerAdmin,
    );
    expect(tenant.statusCode).toBe(400);
    expect(tenant.body).toContain('must use https');
    const test = await t.admin('POST', `/webhooks/${endpoint.id}/test`);
    expect(test.statusCode, test.body).toBe(200);
    const message = test.json().data;
    expect(message).toEqual(
      expect.objectContaining({
        eventType: 'webhook.test',
        attempts: 0,
        deliveredAt: null,
        webhookId: expect.stringMatching(/^msg_/),
      }),
    );
    // Nothing listens on port 9: the attempt fails and says why.
    await t.services.webhooks.runOnce();
    const read = await t.admin('GET', `/webhook-messages/${message.id}`);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().data.attemptLog).toEqual([
      expect.objectContaining({ status: null, error: expect.stringContaining('ECONNREFUSED') }),
    ]);
    const listed = await t.admin('GET', `/webhooks/${endpoint.id}/messages`);
    expect(listed.json().data.map((one: { id: number }) => one.id)).toEqual([message.id]);
    const replayed = await t.admin('POST', `/webhook-messages/${message.id}/replay`);
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json().data.webhookId).toBe(message.webhookId);
    const disabled = await t.admin('POST', `/webhooks/${endpoint.id}/disable`);
    expect(disabled.json().data.enabled).toBe(false);
    const again = await t.admin('POST', `/webhooks/${endpoint.id}/disable`);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('already_done');
  });
});
