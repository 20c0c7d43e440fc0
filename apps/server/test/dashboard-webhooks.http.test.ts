import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';

/**
 * Webhook endpoints in the dashboard (D19): an empty page says what to do; an admin adds an
 * endpoint and reads its secret once; a refused URL comes back beside its field; a test event shows
 * on the deliveries page with its attempts; a reporter reads without forms; another account's
 * endpoint is missing.
 */
describe('webhooks in the dashboard', () => {
  let t: TestApp;
  const now = Date.now();
  let admin: BrowserClient;
  let reporter: BrowserClient;
  let other: BrowserClient;

  beforeAll(async () => {
    t = await createTestApp({ webhooksAllowLoopback: true });
    const partnerId = (await t.partners.findPartner('Test Partner')).id;
    const otherId = (await t.partners.createPartner('Other Partner')).id;
    const person = (email: string, account: string, role: string) =>
      signedInPerson(t, now, { email, account, role });
    admin = await person('admin@partner.example', `partner:${partnerId}`, 'admin');
    reporter = await person('reader@partner.example', `partner:${partnerId}`, 'reporter');
    other = await person('admin@other.example', `partner:${otherId}`, 'admin');
  });
  afterAll(async () => t?.close());

  it('says what to do when there is no endpoint, with the form for admins only', async () => {
    const empty = await admin.get('/webhooks');
    expect(empty.status, empty.body).toBe(200);
    expect(empty.body).toContain('No endpoint yet. Add one above');
    expect(empty.body).toContain('action="/webhooks"');
    expect(empty.body).not.toContain('flag.raised');
    const read = await reporter.get('/webhooks');
    expect(read.body).toContain('Your account’s admins and managers add them.');
    expect(read.body).not.toContain('action="/webhooks"');
  });

  it('refuses a URL inside the network beside its field, keeping what was typed', async () => {
    const refused = await admin.submit('/webhooks', '/webhooks', {
      url: 'https://10.0.0.7/in',
      eventTypes: '*',
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('URL must not go to 10.0.0.7, a private address');
    expect(refused.body).toMatch(/id="url"[^>]*value="https:\/\/10.0.0.7\/in"/);
  });

  it('adds an endpoint, shows its secret once, and shows a test event with its attempt', async () => {
    const created = await admin.submit('/webhooks', '/webhooks', {
      // Under .invalid (RFC 2606), a name that never resolves: the attempt fails, nothing leaves.
      url: 'https://hooks.partner.invalid/placard',
      eventTypes: 'key.created, webhook.test',
      description: 'Ops channel',
    });
    // POST, redirect, GET: the secret's page shows it once, and a reload neither adds another
    // endpoint nor shows the secret again.
    expect(created.status, created.body).toBe(303);
    const secretPage = created.headers.location!;
    expect(secretPage).toMatch(/^\/webhooks\/\d+\/secret$/);
    const shown = await admin.get(secretPage);
    expect(shown.status, shown.body).toBe(200);
    const secret = />(whsec_[^<]+)</.exec(shown.body)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(shown.body).toContain('It is shown only this once.');
    const reloaded = await admin.get(secretPage);
    expect(reloaded.status).toBe(200);
    expect(reloaded.body).toContain('was shown once and is not shown again');
    expect(reloaded.body).not.toContain('whsec_');
    const list = await admin.get('/webhooks');
    expect(list.body.match(/hooks\.partner\.invalid\/placard<\/code>/g)).toHaveLength(1);
    expect(list.body).toContain('https://hooks.partner.invalid/placard');
    expect(list.body).toContain('key.created, webhook.test');
    expect(list.body).not.toContain(secret!);
    const id = Number(/href="\/webhooks\/(\d+)"/.exec(list.body)![1]);

    const rotated = await admin.submit('/webhooks', `/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(303);
    expect(rotated.headers.location).toBe(`/webhooks/${id}/secret`);
    const newSecret = await admin.get(`/webhooks/${id}/secret`);
    expect(newSecret.body).toContain('For 24 hours deliveries are signed with the previous secret too');
    expect(/>(whsec_[^<]+)</.exec(newSecret.body)?.[1]).not.toBe(secret);
    expect((await admin.get(`/webhooks/${id}/secret`)).body).not.toContain('whsec_');
    // Only the endpoint the secret was made for shows it; a reporter never opens the page.
    expect((await reporter.get(`/webhooks/${id}/secret`)).status).toBe(403);

    const tested = await admin.submit('/webhooks', `/webhooks/${id}/test`);
    expect(tested.status).toBe(303);
    // The name does not resolve: the attempt fails, and the pages say so.
    await t.services.webhooks.runOnce();
    const deliveries = await admin.get(`/webhooks/${id}`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toContain('webhook.test');
    expect(deliveries.body).toContain('ENOTFOUND');
    expect(deliveries.body).toContain('not yet');
    expect((await admin.get('/webhooks')).body).toMatch(/Failing since .* \(1 in a row\)/);
    const message = Number(/action="\/webhooks\/\d+\/messages\/(\d+)\/replay"/.exec(deliveries.body)![1]);
    const replayed = await admin.submit(`/webhooks/${id}`, `/webhooks/${id}/messages/${message}/replay`);
    expect(replayed.status).toBe(303);

    // Read, not changed, by a reporter; missing for another partner's people.
    const read = await reporter.get(`/webhooks/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toContain('/replay"');
    expect((await other.get(`/webhooks/${id}`)).status).toBe(404);
    expect((await other.get('/webhooks')).body).not.toContain('hooks.partner.invalid');
  });
});
