import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../src/services/audit.js';
import { SESSION_IDLE_MS } from '../src/services/sessions.js';
import { UserService } from '../src/services/users.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { campaignForm } from './helpers/dashboard-fixtures.js';
import { ENGINES } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { PERSON_PASSWORD, signedInPerson } from './helpers/people.js';

/** Sign-in, sessions and the guards around every form of the dashboard (D13), over real HTTP. */
describe.each(ENGINES)('dashboard sessions on %s', (engine) => {
  let t: TestApp;
  let now = Date.parse('2026-06-01T12:00:00Z');
  let partnerId: number;
  let otherPartnerId: number;

  /** A person with a password in `account`, and a browser signed in as them. */
  const person = (email: string, account: string, role = 'admin', by?: Actor) =>
    signedInPerson(t, now, { email, account, role, by });

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    partnerId = (await t.partners.createPartner('North News')).id;
    otherPartnerId = (await t.partners.createPartner('South Daily')).id;
  });
  afterAll(async () => t?.close());

  it('sets the session cookie with the __Host- prefix, HttpOnly, Secure, SameSite=Lax, path /', async () => {
    const browser = await person('cookie@example.com', 'operator');
    const session = browser.setCookies.find((line) => line.startsWith('__Host-placard-session='));
    expect(session).toMatch(/; Path=\/(;|$)/);
    expect(session).toMatch(/; HttpOnly(;|$)/);
    expect(session).toMatch(/; Secure(;|$)/);
    expect(session).toMatch(/; SameSite=Lax(;|$)/);
    expect(session).not.toMatch(/Domain=/i);
    const csrf = browser.setCookies.find((line) => line.startsWith('__Host-placard-csrf='));
    expect(csrf).toMatch(/HttpOnly.*Secure|Secure.*HttpOnly/);
  });

  it('refuses a form without its CSRF token, from another origin, or marked cross-site', async () => {
    const browser = await person('csrf@example.com', `partner:${partnerId}`);
    const page = await browser.get('/keys');
    expect(page.status).toBe(200);
    const missing = await browser.post('/keys', { label: 'x' });
    expect(missing.status).toBe(403);
    expect(missing.body).toContain('this form has expired or did not come from the dashboard');
    const wrongToken = await browser.post('/keys', { _csrf: `${page.csrf!.slice(0, -2)}xx`, label: 'x' });
    expect(wrongToken.status).toBe(403);
    const otherOrigin = await browser.post(
      '/keys',
      { _csrf: page.csrf!, label: 'x' },
      { origin: 'https://evil.example' },
    );
    expect(otherOrigin.status).toBe(403);
    expect(otherOrigin.body).toContain('sent from another site');
    const crossSite = await browser.post(
      '/keys',
      { _csrf: page.csrf!, label: 'x' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
    const noOrigin = new BrowserClient(t.url, null);
    for (const [name, value] of browser.cookies) noOrigin.cookies.set(name, value);
    expect((await noOrigin.post('/keys', { _csrf: page.csrf!, label: 'x' })).status).toBe(403);
    expect((await t.partners.listKeys(partnerId)).length).toBe(0);
    const sameSite = await browser.post(
      '/keys',
      { _csrf: page.csrf!, label: 'x' },
      { 'sec-fetch-site': 'same-origin' },
    );
    expect(sameSite.status).toBe(201);
  });

  it('gives the same answer for an unknown e-mail address and a wrong password', async () => {
    await person('known@example.com', 'operator');
    const strip = (body: string) => body.replace(/value="[^"]*"/g, 'value=""');
    const wrong = await new BrowserClient(t.url).submit('/sign-in', '/sign-in', {
      email: 'known@example.com',
      password: 'not-the-password',
    });
    const unknown = await new BrowserClient(t.url).submit('/sign-in', '/sign-in', {
      email: 'unknown@example.com',
      password: 'not-the-password',
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(strip(unknown.body).replace('unknown@', 'known@')).toBe(strip(wrong.body));
    expect(wrong.body).toContain('the e-mail address or the password is wrong');
  });

  it('says in plain words why the invitation form refuses a password', async () => {
    const email = 'rosa.marsh@example.com';
    const { link } = await new UserService(t.store, undefined, t.url, () => now).create({
      email,
      account: 'operator',
      role: 'admin',
    });
    const path = new URL(link.url).pathname;
    const browser = new BrowserClient(t.url);
    const refusals = {
      'rosa.marsh@example.com': 'password is mostly your e-mail address or the names in it',
      RosaMarsh1990: 'password is mostly your e-mail address or the names in it',
      Placard12345: 'password is mostly the name Placard',
      abcdefghijkl: 'password is made of repeated or consecutive characters (like aaaa, abcd or 4321)',
      '            ': 'password is made of repeated or consecutive characters (like aaaa, abcd or 4321)',
    };
    for (const [password, problem] of Object.entries(refusals)) {
      const refused = await browser.submit(path, path, { password });
      expect(refused.status, password).toBe(400);
      expect(refused.body, password).toContain(`${problem}; choose a few unrelated words instead`);
    }
    expect((await browser.submit(path, path, { password: PERSON_PASSWORD })).status).toBe(303);
  });

  it('limits sign-in attempts with 429 and Retry-After', async () => {
    const browser = new BrowserClient(t.url);
    const answers = [];
    for (let i = 0; i < 6; i++) {
      const email = 'guessed@example.com';
      answers.push(
        await browser.submit('/sign-in', '/sign-in', { email, password: `guess-${i}-guess-guess` }),
      );
    }
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401, 429]);
    const last = answers[5];
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    expect(last.body).toContain('too many sign-in attempts');
  });

  it('ends a session when it idles out, at sign-out, and when the user is disabled', async () => {
    const idle = await person('idle@example.com', 'operator');
    expect((await idle.get('/review')).status).toBe(200);
    now += SESSION_IDLE_MS;
    const after = await idle.get('/review');
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/sign-in?next=%2Freview');

    const leaving = await person('leaving@example.com', 'operator');
    const cookie = leaving.cookies.get('__Host-placard-session')!;
    await leaving.submit('/review', '/sign-out');
    const replay = new BrowserClient(t.url);
    replay.cookies.set('__Host-placard-session', cookie);
    expect((await replay.get('/review')).status).toBe(303);

    const disabled = await person('disabled@example.com', 'operator');
    await new UserService(t.store, undefined, t.url, () => now).disable('disabled@example.com');
    expect((await disabled.get('/review')).status).toBe(303);
  });

  it('shows a new key once: never again in a page, and only its prefix in the list', async () => {
    const browser = await person('keys@example.com', `partner:${partnerId}`);
    const created = await browser.submit('/keys', '/keys', { label: 'web server' });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const plaintext = /value="(plc_[^"]+)"/.exec(created.body)![1];
    // The key works soon (the change reaches the serving state asynchronously).
    await eventually(
      async () => (await t.fetch('placement=header_banner', plaintext)).statusCode === 200,
      'the new key served',
    );
    for (const path of ['/keys', '/', '/users'])
      expect((await browser.get(path)).body).not.toContain(plaintext);
    expect((await browser.get('/keys')).body).toContain(`${plaintext.slice(0, 10)}…`);
  });

  it("answers another partner's key as missing and a reporter's change as forbidden", async () => {
    const ours = await person('ours@example.com', `partner:${partnerId}`);
    const theirs = (await t.partners.createKey(otherPartnerId, 'theirs')).key;
    const revoke = await ours.submit('/keys', `/keys/${theirs.id}/revoke`);
    expect(revoke.status).toBe(404);
    expect(revoke.body).toContain(`api key ${theirs.id} not found`);
    expect((await ours.get('/keys')).body).not.toContain(theirs.displayPrefix);
    expect((await t.partners.getKey(theirs.id)).status).toBe('active');

    const reader = await person('reader@example.com', `partner:${partnerId}`, 'reporter');
    const refused = await reader.submit('/keys', '/keys', { label: 'nope' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('your role (reporter) may read but not change anything');
  });

  it('keeps a refused campaign form as typed and says what is wrong in the words of its labels', async () => {
    const advertiser = await t.store.createAdvertiser(`Form Ads ${engine}`, now);
    const browser = await person(`form-${engine}@example.com`, `advertiser:${advertiser.id}`);
    const refused = await browser.submit(
      '/campaigns/new',
      '/campaigns/new',
      campaignForm({ title: 'Half-made offer', destinationUrl: 'not a url', timeZone: 'Mars/Olympus' }),
    );
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('Destination URL is required: an absolute http or https URL');
    expect(refused.body).toContain('Time zone must be an IANA time zone');
    expect(refused.body).toContain('value="Half-made offer"');
    expect(refused.body).toMatch(/value="header_banner" checked/);
    expect((await t.campaigns.list({ advertiserId: advertiser.id })).length).toBe(0);
  });

  it('shows the problem beside the field of a refused operator form, keeps what was typed, and changes nothing', async () => {
    const operator = await person(`registry-${engine}@example.com`, 'operator', 'manager');
    const duplicate = await operator.submit('/placements', '/placements', {
      id: 'header_banner',
      description: 'A second header',
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toContain('placement header_banner already exists');
    expect(duplicate.body).toContain('value="A second header"');
    expect((await t.store.getPlacement('header_banner'))?.description).not.toBe('A second header');

    const key = (await t.partners.createKey(partnerId, 'to suspend')).key;
    const noReason = await operator.submit('/keys', `/keys/${key.id}/suspend`, { reason: '  ' });
    expect(noReason.status).toBe(400);
    expect(noReason.body).toContain('Reason is required to suspend a key');
    expect(noReason.body).toMatch(/aria-invalid="true"/);
    expect((await t.partners.getKey(key.id)).status).toBe('active');

    const badCategory = await operator.submit('/partners', `/partners/${partnerId}`, {
      blockedCategories: 'Politics!',
    });
    expect(badCategory.status).toBe(400);
    expect(badCategory.body).toContain('Blocked categories must be a list of lower-case category words');
    expect(badCategory.body).toContain('value="Politics!"');
  });

  it('lets the operator suspend a key with a reason its partner then reads, and audits who did it', async () => {
    const operator = await person(`suspender-${engine}@example.com`, 'operator', 'manager');
    const key = (await t.partners.createKey(partnerId, 'suspended in the dashboard')).key;
    const suspended = await operator.submit('/keys', `/keys/${key.id}/suspend`, {
      reason: 'clicks without impressions',
    });
    expect(suspended.status).toBe(303);
    expect(suspended.headers.location).toBe('/keys');
    const partner = await person(`suspended-${engine}@example.com`, `partner:${partnerId}`, 'admin');
    const keys = (await partner.get('/keys')).body;
    expect(keys).toContain('Suspended: clicks without impressions');
    expect(keys).not.toMatch(/\/(suspend|reinstate)"/);
    // The partner's own people cannot reinstate it, even by posting the form themselves.
    const refused = await partner.submit('/keys', `/keys/${key.id}/reinstate`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('only the operator may suspend, reinstate or limit keys');

    const audit = (await operator.get('/audit')).body;
    const entry = /<tr>(?:(?!<\/tr>).)*<td[^>]*>suspend<(?:(?!<\/tr>).)*<\/tr>/s.exec(audit)?.[0] ?? '';
    expect(entry).toContain(`suspender-${engine}@example.com`);
    expect(entry).toContain('Reason: clicks without impressions');
    expect(entry).toContain(`api key ${key.id}`);
    expect((await operator.submit('/keys', `/keys/${key.id}/reinstate`)).status).toBe(303);
    expect((await t.partners.getKey(key.id)).status).toBe('active');
  });

  it('pages the audit log newest first, with its count and a link to the next page', async () => {
    const operator = await person(`auditor-${engine}@example.com`, 'operator', 'reporter');
    for (let i = 0; i < 51; i++) await t.partners.createKey(otherPartnerId, `audited ${engine} ${i}`);
    const first = await operator.get('/audit');
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/<caption>1–50 of [\d,]+ entries<\/caption>/);
    const older = /href="(\/audit\?page=2)"/.exec(first.body)?.[1];
    expect(older).toBeDefined();
    const ids = (body: string) => [...body.matchAll(/api key (\d+)/g)].map((match) => Number(match[1]));
    const [newest, ...rest] = ids(first.body);
    expect(rest.every((id) => id < newest)).toBe(true);
    const second = await operator.get(older!);
    expect(second.status).toBe(200);
    expect(second.body).toContain('<a href="/audit">First page</a>');
    expect(Math.max(...ids(second.body))).toBeLessThan(Math.min(...ids(first.body)));
  });

  it('says what to do next where a list is empty', async () => {
    const fresh = await t.partners.createPartner(`Keyless ${engine}`);
    const partner = await person(`keyless-${engine}@example.com`, `partner:${fresh.id}`, 'manager');
    const integration = await partner.get('/integration');
    expect(integration.status).toBe(200);
    expect(integration.body).toContain('No API keys yet.');
    expect(integration.body).toContain('<a href="/keys">Create one on API keys</a>');
    // Ready to run: the public address (PLACARD_PUBLIC_URL, by default), a real placement, the key
    // from the environment.
    expect(integration.body).toContain(
      'curl -s &quot;http://127.0.0.1:8080/api/v1/campaigns/fetch?placement=header_banner&amp;limit=3&quot;',
    );
    expect(integration.body).toContain('Bearer $PLACARD_API_KEY');

    const advertiser = await t.store.createAdvertiser(`Empty Ads ${engine}`, now);
    const manager = await person(`empty-${engine}@example.com`, 'operator', 'manager');
    const advertisers = (await manager.get('/advertisers')).body;
    expect(advertisers).toMatch(new RegExp(`Empty Ads ${engine}</td><td[^>]*>0</td>`));
    const reader = await person(
      `empty-reader-${engine}@example.com`,
      `advertiser:${advertiser.id}`,
      'reporter',
    );
    // A reporter reads the list but creates nothing, so is not sent to a form it cannot use.
    expect((await reader.get('/campaigns')).body).toContain('No campaigns to show.');
  });

  it('shows the operator the same readiness as /readyz, with the version and the store', async () => {
    const operator = await person(`health-${engine}@example.com`, 'operator', 'reporter');
    const page = await operator.get('/health');
    expect(page.status).toBe(200);
    const ready = (await t.request({ method: 'GET', url: '/readyz' })).json() as {
      checks: Record<string, string>;
    };
    expect(page.body).toContain('Ready: this instance serves partners and stores their events.');
    for (const answer of Object.values(ready.checks)) expect(page.body).toContain(`>${answer}</span>`);
    expect(page.body).toContain(`<dd>${engine},`);
    const partner = await person(`no-health-${engine}@example.com`, `partner:${partnerId}`);
    const refused = await partner.get('/health');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('only the operator may see the service’s health');
  });
});
