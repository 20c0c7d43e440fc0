import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

/** The Users page names each person's account: its advertiser's or partner's name beside its id (D13). */
describe.each(ENGINES)('the users page on %s', (engine) => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
  });
  afterAll(async () => t?.close());

  it("shows the operator each user's account by name with its label beside it", async () => {
    const partner = await t.partners.createPartner('Harbour Herald');
    const advertiser = await t.store.createAdvertiser('Lantern & Sons', now);
    await signedInPerson(t, now, {
      email: 'desk@herald.example',
      account: `partner:${partner.id}`,
      role: 'admin',
    });
    await signedInPerson(t, now, {
      email: 'ads@lantern.example',
      account: `advertiser:${advertiser.id}`,
      role: 'manager',
    });
    const operator = await signedInPerson(t, now, {
      email: 'ops@placard.example',
      account: 'operator',
      role: 'admin',
    });
    // Cells carry their column's name (shown above them on a phone); the rows are read without it.
    const page = (await operator.get('/users')).body.replace(/ data-label="[^"]*"/g, '');
    const row = (email: string) =>
      /<tr>(.*?)<\/tr>/s.exec(page.slice(page.indexOf(`<td>${email}</td>`) - 4))?.[1];
    expect(row('desk@herald.example')).toContain(
      `<td>Harbour Herald <span class="note">partner:${partner.id}</span></td>`,
    );
    // Rendered escaped, as every value is.
    expect(row('ads@lantern.example')).toContain(
      `<td>Lantern &amp; Sons <span class="note">advertiser:${advertiser.id}</span></td>`,
    );
    expect(row('ops@placard.example')).toContain('<td>operator</td>');
  });

  it('puts each cell under its column: the headers in order, each cell named by its own', async () => {
    const operator = await signedInPerson(t, now, {
      email: 'columns@placard.example',
      account: 'operator',
      role: 'admin',
    });
    const page = (await operator.get('/users')).body;
    const table = page.slice(page.indexOf('<table'), page.indexOf('</table>'));
    const headers = [...table.matchAll(/<th scope="col"[^>]*>(.*?)<\/th>/gs)].map((m) =>
      m[1].replace(/<[^>]+>/g, '').trim(),
    );
    expect(headers).toEqual(['E-mail', 'Account', 'Role', 'Status', 'Since']);
    // On a phone each cell shows above it the name it carries: the e-mail's cell must say E-mail.
    const start = table.indexOf('<td data-label="E-mail">columns@placard.example</td>');
    expect(start).toBeGreaterThan(-1);
    const row = table.slice(start, table.indexOf('</tr>', start));
    expect([...row.matchAll(/<td data-label="([^"]*)"/g)].map((m) => m[1])).toEqual(headers);
  });
});
