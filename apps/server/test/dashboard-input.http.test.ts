import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

/**
 * What the dashboard does with input the store cannot hold, on both engines: a NUL character in a
 * form field, a query or a path is the same 400 page everywhere (PostgreSQL refuses it, SQLite would
 * store it), the sign-in form before any session included; ids past any stored one name nothing.
 */
describe.each(ENGINES)('dashboard input on %s', (engine) => {
  let t: TestApp;
  let operator: BrowserClient;
  beforeAll(async () => {
    t = await createTestApp({ engine });
    operator = await signedInPerson(t, Date.now(), {
      email: 'ops@example.com',
      account: 'operator',
      role: 'admin',
    });
  });
  afterAll(() => t.close());

  const NUL = 'must not contain the NUL character';

  it('answers a NUL character in the sign-in form, before any session, with 400', async () => {
    const visitor = new BrowserClient(t.url);
    const answer = await visitor.submit('/sign-in', '/sign-in', {
      email: 'a\u0000@example.com',
      password: 'x',
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain(`email ${NUL}`);
  });

  it('answers a NUL character in a form field with 400 and stores nothing', async () => {
    const answer = await operator.submit('/advertisers', '/advertisers', { name: 'North\u0000wind' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain(`name ${NUL}`);
    expect((await t.store.listAdvertisers({ limit: 100 })).map((a) => a.name)).not.toContain(
      'North\u0000wind',
    );
  });

  it('answers a NUL character in a report query or a path with 400', async () => {
    for (const path of [
      '/reports?placement=header%00banner',
      '/reports.csv?placement=a%00',
      '/campaigns/1%00',
    ]) {
      const answer = await operator.get(path);
      expect(answer.status, path).toBe(400);
      expect(answer.body, path).toContain(NUL);
    }
  });

  it('answers ids past any stored one as naming nothing', async () => {
    for (const id of ['99999999999999999999', '9223372036854775808', '2147483648']) {
      expect((await operator.get(`/campaigns/${id}`)).status, id).toBe(404);
      expect((await operator.get(`/reports?campaign=${id}`)).status, id).toBeLessThan(500);
      expect((await operator.submit('/keys', `/keys/${id}/revoke`)).status, id).toBe(404);
    }
  });
});
