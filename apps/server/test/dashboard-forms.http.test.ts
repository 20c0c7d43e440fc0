import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient, type Page } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';

/**
 * The dashboard's forms as people meet them (D14): a refused form comes back with everything typed
 * and each problem beside its field in the words of its label, what cannot be undone is asked
 * first on a page of its own, what was done is said on the next page, a malformed id in a path is
 * named in its 404, and plain HTTP away from localhost says the dashboard needs HTTPS there.
 */
describe('dashboard forms', () => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let partnerId: number;
  let advertiserId: number;
  let operator: BrowserClient;
  let partner: BrowserClient;
  let advertiser: BrowserClient;

  const person = (email: string, account: string, role = 'admin') =>
    signedInPerson(t, now, { email, account, role });

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    partnerId = (await t.partners.createPartner('Harbour News')).id;
    advertiserId = (await t.store.createAdvertiser('Lighthouse Goods', now)).id;
    operator = await person('ops@example.com', 'operator');
    partner = await person('partner@example.com', `partner:${partnerId}`);
    advertiser = await person('ads@example.com', `advertiser:${advertiserId}`);
  }, 60_000);
  afterAll(async () => t?.close());

  /** The opening tag of the element with `id` on the page. */
  const tag = (page: Page, id: string): string =>
    new RegExp(`<(?:input|select|fieldset)[^>]*\\bid="${id}"[^>]*>`).exec(page.body)?.[0] ?? '';
  /** Markup's text as a person reads it. */
  const text = (html: string): string =>
    html
      .replace(/<[^>]+>/g, ' ')
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&');
  /** The problem shown beside the field with `id`, as text. */
  const besideField = (page: Page, id: string): string | undefined => {
    const found = new RegExp(`<p class="field-problem" id="${id}-problem">([^<]*)</p>`).exec(page.body);
    return found ? text(found[1]) : undefined;
  };
  /** The summary above a refused form, as text. */
  const summary = (page: Page): string =>
    text(/<div class="problem" role="alert">(.*?)<\/div>/s.exec(page.body)?.[1] ?? '');

  /** The field with `id` is marked invalid, says `message` beside it, and is described by it. */
  function expectProblemBeside(page: Page, id: string, message: string) {
    expect(besideField(page, id), id).toBe(message);
    expect(tag(page, id), id).toMatch(/aria-invalid="true"/);
    expect(tag(page, id), id).toMatch(new RegExp(`aria-describedby="${id}-problem( [^"]*)?"`));
    expect(summary(page)).toContain(message);
    expect(page.body).toContain(`href="#${id}"`);
  }

  /**
   * A form refused with 400 that shows each value typed in its field (`kept`, by the field's id),
   * and `problem` beside the field it names.
   */
  function expectRefusedAsTyped(
    page: Page,
    kept: Record<string, string>,
    problem?: readonly [id: string, message: string],
  ) {
    expect(page.status).toBe(400);
    for (const [id, value] of Object.entries(kept)) expect(tag(page, id), id).toContain(`value="${value}"`);
    if (problem) expectProblemBeside(page, ...problem);
  }

  describe('a refused form keeps everything typed', () => {
    it('the invitation: e-mail address, role and account', async () => {
      const refused = await operator.submit('/users', '/users', {
        email: 'not an address',
        role: 'reporter',
        account: 'advertiser:Lighthouse Goods',
      });
      expectRefusedAsTyped(refused, { email: 'not an address', account: 'advertiser:Lighthouse Goods' }, [
        'email',
        'E-mail address must be an e-mail address such as name@example.com',
      ]);
      expect(refused.body).toMatch(/<option value="reporter" selected>/);
      expect(refused.body).not.toMatch(/<option value="admin" selected>/);

      const wrongAccount = await operator.submit('/users', '/users', {
        email: 'someone@example.com',
        role: 'manager',
        account: 'advertiser:Nobody Such',
      });
      expect(wrongAccount.status).toBeGreaterThanOrEqual(400);
      expect(tag(wrongAccount, 'email')).toContain('value="someone@example.com"');
      expect(wrongAccount.body).toMatch(/<option value="manager" selected>/);
      expect(tag(wrongAccount, 'account')).toContain('value="advertiser:Nobody Such"');
    });

    it('a new campaign and an edit: every field, checkbox and choice', async () => {
      const typed = {
        title: 'Half-made offer',
        description: 'Two sentences at most.',
        category: 'travel',
        destinationUrl: 'not a url',
        countries: 'US, CA',
        timeZone: 'Europe/Paris',
        startAt: '2026-07-01T09:00',
        endAt: '2026-08-01T18:00',
        impressionsDaily: '1000',
        clicksDaily: '50',
        impressionsTotal: '90000',
        clicksTotal: '900',
        pacing: 'even',
      };
      const body = new URLSearchParams({ ...typed, _csrf: (await advertiser.get('/campaigns/new')).csrf! });
      body.append('placements', 'header_banner');
      body.append('placements', 'sidebar_top');
      body.append('devices', 'mobile');
      const refused = await advertiser.postBody('/campaigns/new', body.toString());
      expect(refused.status).toBe(422);
      const expectKept = (page: Page) => {
        for (const [name, value] of Object.entries(typed).filter(([name]) => name !== 'pacing'))
          expect(tag(page, name), name).toContain(`value="${value}"`);
        expect(page.body).toMatch(/value="header_banner" checked/);
        expect(page.body).toMatch(/value="sidebar_top" checked/);
        expect(page.body).toMatch(/value="mobile" checked/);
        expect(page.body).not.toMatch(/value="desktop" checked/);
        expect(page.body).toMatch(/value="even" checked/);
        expect(page.body).not.toMatch(/value="asap" checked/);
      };
      expectKept(refused);
      expect((await t.campaigns.list({ advertiserId })).length).toBe(0);

      const [id] = await t.addCampaigns(
        [{ title: 'Saved offer', destinationUrl: 'https://example.com/', placements: ['header_banner'] }],
        'Lighthouse Goods',
      );
      const editBody = new URLSearchParams({
        ...typed,
        _csrf: (await advertiser.get(`/campaigns/${id}/edit`)).csrf!,
      });
      for (const [name, value] of [
        ['placements', 'header_banner'],
        ['placements', 'sidebar_top'],
        ['devices', 'mobile'],
      ])
        editBody.append(name, value);
      const refusedEdit = await advertiser.postBody(`/campaigns/${id}/edit`, editBody.toString());
      expect(refusedEdit.status).toBe(422);
      expectKept(refusedEdit);
      expect((await t.campaigns.get(id)).title).toBe('Saved offer');
    });

    it('a new key, a suspension reason, a partner, an advertiser and a placement', async () => {
      const longLabel = 'l'.repeat(101);
      const key = await partner.submit('/keys', '/keys', { label: longLabel });
      expectRefusedAsTyped(key, { label: longLabel }, [
        'label',
        'Label must be a string of at most 100 characters',
      ]);

      const { key: active } = await t.partners.createKey(partnerId, 'kept reason');
      const suspend = await operator.submit('/keys', `/keys/${active.id}/suspend`, { reason: '   ' });
      const reasonId = `keys-${active.id}-suspend-reason`;
      expectRefusedAsTyped(suspend, { [reasonId]: '   ' }, [reasonId, 'Reason is required to suspend a key']);

      const longName = 'n'.repeat(101);
      const newAdvertiser = await operator.submit('/advertisers', '/advertisers', { name: longName });
      expectRefusedAsTyped(newAdvertiser, { name: longName });
      const rename = await operator.submit('/advertisers', `/advertisers/${advertiserId}`, {
        name: longName,
      });
      const renameId = `advertisers-${advertiserId}-name`;
      expectRefusedAsTyped(rename, { [renameId]: longName }, [renameId, 'Name must be 1 to 100 characters']);

      // A new partner and a new placement, each sent from its list's page.
      for (const [path, form, problem] of [
        [
          '/partners',
          { name: 'Quay Weekly', blockedCategories: 'Politics!' },
          ['blockedCategories', 'Blocked categories must be a list of lower-case category words'],
        ],
        [
          '/placements',
          { id: 'Video Preroll', description: 'Before the video' },
          ['id', 'Id must be a lower-case slug such as "video_preroll" (at most 64 characters)'],
        ],
      ] as const)
        expectRefusedAsTyped(await operator.submit(path, path, form), form, problem);

      const longDescription = 'd'.repeat(201);
      const describe = await operator.submit('/placements', '/placements/header_banner', {
        description: longDescription,
      });
      expectRefusedAsTyped(describe, { 'placements-header-banner-description': longDescription });
    });

    it('a flag’s dismissal note and a rejection reason', async () => {
      const { key } = await t.partners.createKey(partnerId, 'flagged');
      const evidence = { summary: 'clicks with no impression', windowEnd: new Date(now).toISOString() };
      const { flag } = await t.store.saveKeyFlag(
        { apiKeyId: key.id, partnerId, signal: 'clicks without impressions', evidence },
        now,
      );
      const note = 'n'.repeat(501);
      const dismiss = await operator.submit('/flags', `/flags/${flag.id}/dismiss`, { note });
      const noteId = `flags-${flag.id}-dismiss-note`;
      expectRefusedAsTyped(dismiss, { [noteId]: note }, [noteId, 'Note must be at most 500 characters']);

      const [id] = await t.addCampaigns(
        [{ title: 'Pending offer', destinationUrl: 'https://example.com/', placements: ['header_banner'] }],
        'Lighthouse Goods',
      );
      await t.campaigns.act(id, 'submit');
      const reject = await operator.submit('/review', `/campaigns/${id}/reject`, { reason: '  ' });
      expect(reject.status).toBe(400);
      expect(tag(reject, `reason-${id}`)).toContain('value="  "');
      expect(besideField(reject, `reason-${id}`)).toBe('Reason is required to reject a campaign');
      expect(tag(reject, `reason-${id}`)).toMatch(/aria-invalid="true"/);
    });
  });

  it('names each problem with the label the person sees, beside its field and in the summary', async () => {
    const body = new URLSearchParams({
      _csrf: (await advertiser.get('/campaigns/new')).csrf!,
      title: 'Labelled',
      destinationUrl: 'ftp://example.com/',
      placements: 'header_banner',
      countries: 'USA',
      startAt: '2026-08-01T09:00',
      endAt: '2026-07-01T09:00',
      clicksDaily: '-3',
      pacing: 'even',
    });
    const refused = await advertiser.postBody('/campaigns/new', body.toString());
    expect(refused.status).toBe(422);
    expectProblemBeside(
      refused,
      'destinationUrl',
      'Destination URL is required: an absolute http or https URL',
    );
    expectProblemBeside(refused, 'endAt', 'Ends must be after Starts');
    expectProblemBeside(
      refused,
      'clicksDaily',
      'Daily click cap must be a whole number above 0, or left empty',
    );
    expectProblemBeside(refused, 'countries', 'Countries: "USA" is not a two-letter country code such as US');
    // The API's names and types are not what the person typed into.
    const shown = [
      summary(refused),
      ...[...refused.body.matchAll(/class="field-problem"[^>]*>([^<]*)</g)].map((found) => found[1]),
    ].join(' ');
    for (const apiWords of ['startAt', 'endAt', 'caps.', 'or null', 'destinationUrl', 'ISO 3166'])
      expect(shown, apiWords).not.toContain(apiWords);
    // The summary comes first, before the form.
    expect(refused.body.indexOf('role="alert"')).toBeLessThan(
      refused.body.indexOf('<form method="post" action="/campaigns/new"'),
    );
    // A group of choices is described by its problem, below its legend.
    const pacing = 'Pacing evenly needs a daily cap or budget, or a total cap or budget and an end';
    expect(besideField(refused, 'pacing')).toBe(pacing);
    expect(tag(refused, 'pacing')).toContain('aria-describedby="pacing-problem"');
    expect(summary(refused)).toContain(pacing);
    expect(summary(refused)).toContain('5 fields need a change');
  });

  describe('asks before what cannot be undone, and says what was done', () => {
    it('revoking a key: a page that says what happens, then the revocation and its message once', async () => {
      const { key } = await t.partners.createKey(partnerId, 'to revoke');
      const list = await partner.get('/keys');
      expect(list.body).toContain(`href="/keys/${key.id}/revoke"`);
      expect(list.body).not.toContain(`action="/keys/${key.id}/revoke"`);

      const ask = await partner.get(`/keys/${key.id}/revoke`);
      expect(ask.status).toBe(200);
      expect(ask.body).toContain(`Revoke key ${key.displayPrefix}…?`);
      expect(ask.body).toContain('cannot be turned back on');
      expect(ask.body).toContain(`<form method="post" action="/keys/${key.id}/revoke"`);
      expect(ask.body).toContain('href="/keys"');
      expect((await t.partners.getKey(key.id)).status).toBe('active');

      const done = await partner.post(`/keys/${key.id}/revoke`, { _csrf: ask.csrf! });
      expect(done.status).toBe(303);
      expect(done.headers.location).toBe('/keys');
      expect((await t.partners.getKey(key.id)).status).toBe('revoked');
      const next = await partner.get('/keys');
      expect(next.body).toContain(`<p class="flash" role="status">Key ${key.displayPrefix}… revoked`);
      expect((await partner.get('/keys')).body).not.toContain('class="flash"');

      // Without the form's token, nothing happens.
      const { key: other } = await t.partners.createKey(partnerId, 'kept');
      expect((await partner.post(`/keys/${other.id}/revoke`, {})).status).toBe(403);
      expect((await t.partners.getKey(other.id)).status).toBe('active');
      // Asked again about a revoked key, the page says so.
      expect((await partner.get(`/keys/${key.id}/revoke`)).status).toBe(409);
      // A reporter may not revoke; another partner's key is missing.
      const reporter = await person('reader@example.com', `partner:${partnerId}`, 'reporter');
      expect((await reporter.get(`/keys/${other.id}/revoke`)).status).toBe(403);
      const elsewhere = (await t.partners.createKey((await t.partners.createPartner('Other Daily')).id)).key;
      expect((await partner.get(`/keys/${elsewhere.id}/revoke`)).status).toBe(404);
    });

    it('archiving a campaign: a page that says it is final, then the archive and its message', async () => {
      const [id] = await t.addCampaigns(
        [{ title: 'Old offer', destinationUrl: 'https://example.com/', placements: ['header_banner'] }],
        'Lighthouse Goods',
      );
      const list = await advertiser.get('/campaigns');
      expect(list.body).toContain(`href="/campaigns/${id}/archive"`);
      expect(list.body).not.toContain(`action="/campaigns/${id}/archive"`);
      const ask = await advertiser.get(`/campaigns/${id}/archive`);
      expect(ask.status).toBe(200);
      expect(ask.body).toContain('Archive “Old offer”?');
      expect(ask.body).toContain('cannot be resumed, edited or submitted again');
      expect(ask.body).toContain(`<form method="post" action="/campaigns/${id}/archive"`);
      expect((await t.campaigns.get(id)).status).not.toBe('archived');

      const done = await advertiser.post(`/campaigns/${id}/archive`, { _csrf: ask.csrf! });
      expect(done.status).toBe(303);
      expect((await t.campaigns.get(id)).status).toBe('archived');
      expect((await advertiser.get('/campaigns')).body).toContain('Campaign “Old offer” archived');
      expect((await advertiser.get(`/campaigns/${id}/archive`)).status).toBe(409);
    });

    it('submitting, approving and rejecting: each says what was done on the next page', async () => {
      const [first, second] = await t.addCampaigns(
        [
          { title: 'Autumn offer', destinationUrl: 'https://example.com/', placements: ['header_banner'] },
          { title: 'Winter offer', destinationUrl: 'https://example.com/', placements: ['header_banner'] },
        ],
        'Lighthouse Goods',
      );
      for (const id of [first, second]) {
        const submitted = await advertiser.submit(`/campaigns/${id}`, `/campaigns/${id}/submit`);
        expect(submitted.status).toBe(303);
      }
      expect((await advertiser.get('/campaigns')).body).toContain(
        'Campaign “Winter offer” submitted for review',
      );
      await operator.submit('/review', `/campaigns/${first}/approve`);
      expect((await operator.get('/review')).body).toContain('Campaign “Autumn offer” approved');
      await operator.submit('/review', `/campaigns/${second}/reject`, { reason: 'too cold' });
      expect((await operator.get('/review')).body).toContain('Campaign “Winter offer” rejected');
    });
  });

  it('names a malformed id in a path in its 404, never a number the person did not type', async () => {
    const pages: Array<[BrowserClient, string, string]> = [
      [advertiser, '/campaigns/abc', 'there is no campaign “abc”'],
      [advertiser, '/campaigns/1.5/edit', 'there is no campaign “1.5”'],
      [advertiser, '/campaigns/-2/archive', 'there is no campaign “-2”'],
      [partner, '/keys/abc/revoke', 'there is no api key “abc”'],
    ];
    for (const [browser, path, message] of pages) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(404);
      expect(page.body, path).toContain(message);
      expect(page.body, path).toContain('<h1>Not found</h1>');
      expect(page.body, path).not.toMatch(/ 0 not found/);
    }
    const posted = await partner.submit('/keys', '/keys/abc/revoke');
    expect(posted.status).toBe(404);
    expect(posted.body).toContain('there is no api key “abc”');
    const action = await advertiser.submit('/campaigns', '/campaigns/abc/pause');
    expect(action.status).toBe(404);
    expect(action.body).toContain('there is no campaign “abc”');
  });

  describe('over plain HTTP away from localhost', () => {
    const HTTPS = 'The dashboard needs HTTPS at this address';

    it('the sign-in page says the dashboard needs HTTPS there, and how', async () => {
      const visitor = new BrowserClient(t.url);
      const elsewhere = await visitor.get('/sign-in', { host: 'ads.example.com' });
      expect(elsewhere.body).toContain(HTTPS);
      expect(elsewhere.body).toContain('TLS at HAProxy');
      expect(elsewhere.body).toContain('PLACARD_PUBLIC_URL');
      for (const headers of <Array<Record<string, string>>>[
        {},
        { host: 'localhost:8080' },
        { host: 'placard.localhost' },
        { host: 'ads.example.com', 'x-forwarded-proto': 'https' },
      ])
        expect((await visitor.get('/sign-in', headers)).body, JSON.stringify(headers)).not.toContain(HTTPS);
    });

    it('the refused sign-in says why: the browser kept none of its cookies', async () => {
      // Such a browser stores no Secure cookie, so its form arrives without the CSRF secret.
      const csrf = (await new BrowserClient(t.url).get('/sign-in')).csrf!;
      const refused = await new BrowserClient(t.url, 'http://ads.example.com').post('/sign-in', {
        _csrf: csrf,
        email: 'a@example.com',
        password: 'whatever-it-is',
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain(HTTPS);
      const overHttps = await new BrowserClient(t.url, 'https://ads.example.com').post('/sign-in', {
        _csrf: csrf,
        email: 'a@example.com',
        password: 'whatever-it-is',
      });
      expect(overHttps.status).toBe(403);
      expect(overHttps.body).not.toContain(HTTPS);
    });
  });
});
