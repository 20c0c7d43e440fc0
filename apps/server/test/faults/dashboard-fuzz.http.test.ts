import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BrowserClient, type Page } from '../helpers/browser-client.js';
import { ENGINES } from '../helpers/engines.js';
import { signedInPerson } from '../helpers/people.js';

/**
 * Hostile input in every form and page of the dashboard, on both engines, as signed-in people with
 * a valid CSRF token (and, for the sign-in form, as a visitor): NUL characters, a lone surrogate,
 * long text, empty text, ids past 2^31, 2^53 and 2^63, negative, fractional and overflowing numbers,
 * repeated fields, in every form field, path id and query parameter; then JSON bodies (wrong types,
 * nested 2,500 deep) and several hostile values at once with fast-check (fixed seed). Whatever
 * arrives, the answer is below 500.
 */

/** Form values, as a browser would send them (URL-encoded by the client). */
const HOSTILE = [
  'North\u0000wind',
  '\ud800',
  'x'.repeat(10_000),
  '',
  ' ',
  '12abc',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999',
  '-1',
  '1.5',
  '1e400',
];
/** The same in a path segment or a query parameter (percent-encoded as sent). */
const HOSTILE_IN_URL = [
  'a%00b',
  '%ED%A0%80',
  '%FF',
  'x'.repeat(2_000),
  '',
  '12abc',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999',
  '-1',
  '1e400',
];

type Who = 'operator' | 'advertiser' | 'partner' | 'visitor';

interface Form {
  who: Who;
  /** The action; `{id}` is replaced by an existing object's id or a hostile one. */
  action: string;
  /** What `{id}` names when it is not hostile. */
  names?: 'advertiser' | 'partner' | 'key' | 'campaign' | 'placement' | 'flag' | 'link';
  fields: string[];
}

const CAMPAIGN_FIELDS = [
  'title',
  'description',
  'category',
  'destinationUrl',
  'placements',
  'countries',
  'devices',
  'timeZone',
  'startAt',
  'endAt',
  'impressionsDaily',
  'clicksDaily',
  'impressionsTotal',
  'clicksTotal',
  'pacing',
];

/** Every form the dashboard's pages post, with the fields they send. */
const FORMS: Form[] = [
  { who: 'visitor', action: '/sign-in', fields: ['email', 'password', 'next'] },
  { who: 'visitor', action: '/link/{id}', names: 'link', fields: ['password'] },
  { who: 'operator', action: '/advertisers', fields: ['name'] },
  { who: 'operator', action: '/advertisers/{id}', names: 'advertiser', fields: ['name'] },
  { who: 'operator', action: '/partners', fields: ['name', 'blockedCategories'] },
  { who: 'operator', action: '/partners/{id}', names: 'partner', fields: ['blockedCategories'] },
  { who: 'operator', action: '/placements', fields: ['id', 'description'] },
  { who: 'operator', action: '/placements/{id}', names: 'placement', fields: ['description'] },
  { who: 'operator', action: '/placements/{id}/enable', names: 'placement', fields: [] },
  { who: 'operator', action: '/placements/{id}/disable', names: 'placement', fields: [] },
  { who: 'operator', action: '/keys/{id}/suspend', names: 'key', fields: ['reason'] },
  { who: 'operator', action: '/keys/{id}/reinstate', names: 'key', fields: [] },
  { who: 'operator', action: '/flags/{id}/dismiss', names: 'flag', fields: ['note'] },
  { who: 'operator', action: '/flags/{id}/suspend', names: 'flag', fields: ['reason'] },
  { who: 'operator', action: '/users', fields: ['email', 'role', 'account'] },
  ...['submit', 'approve', 'reject', 'pause', 'resume', 'archive', 'unknown'].map((action): Form => ({
    who: 'operator',
    action: `/campaigns/{id}/${action}`,
    names: 'campaign',
    fields: ['reason'],
  })),
  { who: 'advertiser', action: '/campaigns/new', fields: CAMPAIGN_FIELDS },
  { who: 'advertiser', action: '/campaigns/{id}/edit', names: 'campaign', fields: CAMPAIGN_FIELDS },
  { who: 'advertiser', action: '/users', fields: ['email', 'role'] },
  { who: 'partner', action: '/keys', fields: ['label'] },
  { who: 'partner', action: '/keys/{id}/rotate', names: 'key', fields: [] },
  { who: 'partner', action: '/keys/{id}/revoke', names: 'key', fields: [] },
  { who: 'partner', action: '/partners/{id}/blocks', names: 'partner', fields: ['blockedAdvertisers'] },
  { who: 'partner', action: '/partners/{id}/blocks/unblock', names: 'partner', fields: ['advertiserId'] },
];

/** Every page that reads its query or path, with the parameters it reads. */
const PAGES: Array<{ who: Who; path: string; names?: Form['names']; query: string[] }> = [
  { who: 'visitor', path: '/sign-in', query: ['next'] },
  { who: 'visitor', path: '/link/{id}', names: 'link', query: [] },
  {
    who: 'operator',
    path: '/reports',
    query: ['window', 'breakdown', 'campaign', 'placement', 'timeZone', 'advertiser', 'partner'],
  },
  {
    who: 'operator',
    path: '/reports/figures',
    query: ['window', 'breakdown', 'campaign', 'placement', 'timeZone'],
  },
  {
    who: 'operator',
    path: '/reports.csv',
    query: ['window', 'breakdown', 'campaign', 'placement', 'timeZone'],
  },
  { who: 'advertiser', path: '/reports', query: ['campaign', 'placement', 'breakdown'] },
  { who: 'partner', path: '/reports', query: ['placement', 'breakdown', 'campaign'] },
  { who: 'operator', path: '/audit', query: ['after', 'before', 'objectType', 'actor'] },
  { who: 'operator', path: '/campaigns', query: ['after', 'before', 'status'] },
  { who: 'operator', path: '/review', query: ['after'] },
  { who: 'operator', path: '/campaigns/{id}', names: 'campaign', query: [] },
  { who: 'advertiser', path: '/campaigns/{id}/edit', names: 'campaign', query: [] },
  { who: 'operator', path: '/keys', query: ['after', 'partner'] },
  { who: 'operator', path: '/flags', query: ['after', 'status'] },
  { who: 'partner', path: '/integration', query: ['placement'] },
];

describe.each(ENGINES)('hostile dashboard input on %s', (engine) => {
  let t: TestApp;
  const browsers = {} as Record<Who, BrowserClient>;
  const csrf = {} as Record<Who, string>;
  const existing: Record<NonNullable<Form['names']>, string> = {
    advertiser: '1',
    partner: '1',
    key: '1',
    campaign: '1',
    placement: 'header_banner',
    flag: '1',
    link: 'not-a-link-secret',
  };

  beforeAll(async () => {
    t = await createTestApp({ engine });
    const now = Date.now();
    browsers.operator = await signedInPerson(t, now, {
      email: 'ops@example.com',
      account: 'operator',
      role: 'admin',
    });
    const advertiser = await t.admin('POST', '/advertisers', { name: 'Fuzzed advertiser' });
    existing.advertiser = String(advertiser.json().data.id);
    browsers.advertiser = await signedInPerson(t, now, {
      email: 'ads@example.com',
      account: `advertiser:${existing.advertiser}`,
      role: 'admin',
    });
    const campaign = await t.admin('POST', '/campaigns', {
      advertiserId: Number(existing.advertiser),
      title: 'Spring',
      destinationUrl: 'https://a.example/',
      placements: ['header_banner'],
    });
    existing.campaign = String(campaign.json().data.id);
    existing.partner = String((await t.admin('GET', '/partners')).json().data[0].id);
    existing.key = String(t.apiKeyId);
    browsers.partner = await signedInPerson(t, now, {
      email: 'partner@example.com',
      account: `partner:${existing.partner}`,
      role: 'admin',
    });
    browsers.visitor = new BrowserClient(t.url);
    for (const who of Object.keys(browsers) as Who[]) {
      const page = await browsers[who].get(who === 'visitor' ? '/sign-in' : '/users');
      csrf[who] = page.csrf ?? (await browsers[who].get('/sign-in')).csrf!;
    }
  });
  afterAll(() => t.close());

  function expectHandled(answer: Page, what: string): void {
    expect(answer.status, `${what}: ${answer.body.slice(0, 300)}`).toBeLessThan(500);
  }

  const sendForm = (who: Who, action: string, body: string, contentType?: string) =>
    browsers[who].postBody(action, body, contentType);

  it.each(FORMS)('$who posts $action with a hostile value in each field', async (form) => {
    for (const field of form.fields)
      for (const value of HOSTILE) {
        const answer = await sendForm(
          form.who,
          form.action.replace('{id}', existing[form.names ?? 'advertiser']),
          new URLSearchParams({ _csrf: csrf[form.who], [field]: value }).toString(),
        );
        expectHandled(answer, `${form.action} ${field}=${value.slice(0, 40)}`);
      }
  });

  it.each(FORMS.filter((form) => form.names))('$who posts $action with a hostile id', async (form) => {
    for (const id of HOSTILE_IN_URL) {
      const answer = await sendForm(
        form.who,
        form.action.replace('{id}', id),
        new URLSearchParams({ _csrf: csrf[form.who] }).toString(),
      );
      expectHandled(answer, `${form.action} id=${id.slice(0, 40)}`);
    }
  });

  it.each(FORMS)('$who posts $action as JSON: wrong types, nested 2,500 deep, empty', async (form) => {
    const action = form.action.replace('{id}', existing[form.names ?? 'advertiser']);
    const values = ['1', 'true', 'null', '[]', '{}', '"x"', `${'['.repeat(2_500)}${']'.repeat(2_500)}`];
    const bodies = [
      ...form.fields.flatMap((field) =>
        values.map(
          (value) => `{"_csrf":${JSON.stringify(csrf[form.who])},${JSON.stringify(field)}:${value}}`,
        ),
      ),
      '',
      'null',
      '[]',
      `${'{"a":'.repeat(2_500)}1${'}'.repeat(2_500)}`,
    ];
    for (const body of bodies) {
      const answer = await sendForm(form.who, action, body, 'application/json');
      expectHandled(answer, `${form.action} ${body.slice(0, 60)}`);
    }
  });

  it.each(PAGES)('$who opens $path with hostile query parameters and ids', async (page) => {
    const path = page.path.replace('{id}', existing[page.names ?? 'advertiser']);
    for (const name of page.query)
      for (const value of HOSTILE_IN_URL) {
        const url = `${path}?${name}=${value}`;
        expectHandled(await browsers[page.who].get(url), `GET ${url.slice(0, 80)}`);
      }
    // A parameter given twice.
    for (const name of page.query)
      expectHandled(await browsers[page.who].get(`${path}?${name}=1&${name}=2`), `GET ${path} ${name} twice`);
    if (page.names)
      for (const id of HOSTILE_IN_URL) {
        const url = page.path.replace('{id}', id);
        expectHandled(await browsers[page.who].get(url), `GET ${url.slice(0, 80)}`);
      }
  });

  it('several hostile values at once, in any form (fixed seed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FORMS),
        fc.option(fc.constantFrom(...HOSTILE_IN_URL)),
        fc.array(fc.tuple(fc.nat(), fc.array(fc.constantFrom(...HOSTILE), { minLength: 1, maxLength: 3 })), {
          maxLength: 4,
        }),
        async (form, id, picks) => {
          const body = new URLSearchParams({ _csrf: csrf[form.who] });
          for (const [index, values] of picks)
            if (form.fields.length > 0)
              for (const value of values) body.append(form.fields[index % form.fields.length], value);
          const action = form.action.replace(
            '{id}',
            (form.names && id) ?? existing[form.names ?? 'advertiser'],
          );
          expectHandled(
            await sendForm(form.who, action, body.toString()),
            `${action} ${body.toString().slice(0, 200)}`,
          );
        },
      ),
      { seed: 20261127, numRuns: 150 },
    );
  }, 120_000);
});
