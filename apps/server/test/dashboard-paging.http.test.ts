import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { signedInPerson } from './helpers/people.js';

/** The hrefs of the pager's links, by their words. */
const links = (body: string): Record<string, string> => {
  const nav = /<nav class="pager"[^>]*>([\s\S]*?)<\/nav>/.exec(body)?.[1] ?? '';
  return Object.fromEntries(
    [...nav.matchAll(/<a href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].map((m) => [
      m[2],
      m[1].replaceAll('&amp;', '&'),
    ]),
  );
};

/** The hrefs of the links in the pager of the list labelled `label`, by their words. */
const linksOf = (body: string, label: string): Record<string, string> => links(pagerOf(body, label));

/** The pager of the list labelled `label` (pages with two lists have two pagers). */
function pagerOf(body: string, label: string): string {
  for (const match of body.matchAll(/<nav class="pager"[^>]*>[\s\S]*?<\/nav>/g)) {
    if (match[0].includes(`aria-label="Pages of ${label.toLowerCase()}"`)) return match[0];
  }
  return '';
}

/**
 * A list of `total` rows (51 to 100) at `path` shows the first 50 with the count and links to its
 * second page, which shows the rest: `newest` is on the first page, `older` (the 51st newest) is
 * not, and `oldest` is on the second.
 */
async function expectTwoPages(
  client: BrowserClient,
  list: { path: string; noun: string; total: number },
  rows: { newest: string; older: string; oldest: string },
): Promise<string> {
  const { path, noun, total } = list;
  const first = await client.get(path);
  expect(first.status).toBe(200);
  expect(first.body).toContain(`<caption>1–50 of ${total} ${noun}</caption>`);
  expect(first.body).toContain(rows.newest);
  expect(first.body).not.toContain(rows.older);
  expect(links(first.body)).toEqual({ 'Next page': `${path}?page=2`, 'Last page': `${path}?page=2` });
  const second = await client.get(`${path}?page=2`);
  expect(second.body).toContain(`<caption>51–${total} of ${total} ${noun}</caption>`);
  expect(second.body).toContain(rows.oldest);
  return first.body;
}

/** The dashboard's lists page through everything, newest first, with a count and plain links. */
describe.each(ENGINES)('dashboard paging on %s', (engine) => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let operator: BrowserClient;
  let ids: number[];
  /** More than the 1,000 the campaigns page once read, and not a multiple of a page. */
  const CAMPAIGNS = 1_060;

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    ids = await t.addCampaigns(
      Array.from({ length: CAMPAIGNS }, (_, n) => campaign({ title: `Paged ${n + 1}` })),
      'Paging Ads',
    );
    operator = await signedInPerson(t, now, {
      email: `pager-${engine}@example.com`,
      account: 'operator',
      role: 'manager',
    });
  }, 120_000);
  afterAll(async () => t?.close());

  it('lists campaigns newest first, 50 to a page, with their count and links to every page', async () => {
    const newest = Math.max(...ids);
    const oldest = Math.min(...ids);
    const first = await operator.get('/campaigns');
    expect(first.status).toBe(200);
    expect(first.body).toContain('<caption>1–50 of 1,060 campaigns</caption>');
    expect(first.body).toContain(`<a href="/campaigns/${newest}">`);
    expect(first.body).not.toContain(`<a href="/campaigns/${newest - 50}">`);
    expect(first.body).toContain('aria-current="page">Page 1 of 22<');
    expect(links(first.body)).toEqual({
      'Next page': '/campaigns?page=2',
      'Last page': '/campaigns?page=22',
    });

    const second = await operator.get('/campaigns?page=2');
    expect(second.body).toContain('<caption>51–100 of 1,060 campaigns</caption>');
    expect(second.body).toContain(`<a href="/campaigns/${newest - 50}">`);
    expect(links(second.body)).toEqual({
      'First page': '/campaigns',
      'Previous page': '/campaigns',
      'Next page': '/campaigns?page=3',
      'Last page': '/campaigns?page=22',
    });

    // The last page holds the oldest, which a list of the first 1,000 ids put first.
    const last = await operator.get(links(first.body)['Last page']);
    expect(last.body).toContain('<caption>1,051–1,060 of 1,060 campaigns</caption>');
    expect(last.body).toContain(`<a href="/campaigns/${oldest}">`);
    expect(links(last.body)).toEqual({ 'First page': '/campaigns', 'Previous page': '/campaigns?page=21' });

    // A page past the end says so, and leads back.
    const past = await operator.get('/campaigns?page=99');
    expect(past.status).toBe(200);
    expect(past.body).toContain('Page 99 is past the end of the list (1,060 campaigns).');
    expect(links(past.body)['First page']).toBe('/campaigns');
  });

  it('narrows a report to any campaign, the newest suggested (not the first 1,000 ids)', async () => {
    const newest = Math.max(...ids);
    const oldest = Math.min(...ids);
    const page = await operator.get('/reports');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`<option value="${newest}">Paged ${CAMPAIGNS} (#${newest})</option>`);
    expect(page.body).not.toContain(`<option value="${oldest}">`);
    for (const id of [newest, oldest]) {
      const chosen = await operator.get(`/reports?campaign=${id}`);
      expect(chosen.status).toBe(200);
      expect(chosen.body).toMatch(new RegExp(`<input id="report-campaign" name="campaign" value="${id}"`));
    }
  });

  it('pages the review queue the same way', async () => {
    await t.addCampaigns(
      Array.from({ length: 60 }, (_, n) => campaign({ title: `Waiting ${n + 1}`, status: 'pending_review' })),
      'Paging Ads',
    );
    const first = await operator.get('/review');
    expect(first.body).toContain('1–50 of 60 campaigns to review');
    expect(first.body).toContain('<h2>Waiting 60</h2>');
    expect(first.body).not.toContain('<h2>Waiting 10</h2>');
    expect(links(first.body)).toEqual({ 'Next page': '/review?page=2', 'Last page': '/review?page=2' });
    const second = await operator.get('/review?page=2');
    expect(second.body).toContain('51–60 of 60 campaigns to review');
    expect(second.body).toContain('<h2>Waiting 1</h2>');
  });

  it('pages the advertisers newest first', async () => {
    for (let n = 1; n <= 55; n++) await t.store.createAdvertiser(`Paged advertiser ${n}`, now);
    const total = (await t.store.listAdvertisers({ limit: 1_000 })).length;
    await expectTwoPages(
      operator,
      { path: '/advertisers', noun: 'advertisers', total },
      {
        newest: '>Paged advertiser 55</td>',
        older: '>Paged advertiser 5</td>',
        oldest: '>Paged advertiser 1</td>',
      },
    );
  });

  it('pages the partners newest first', async () => {
    for (let n = 1; n <= 55; n++) await t.partners.createPartner(`Paged partner ${n}`);
    const total = (await t.store.listPartners()).length;
    await expectTwoPages(
      operator,
      { path: '/partners', noun: 'partners', total },
      { newest: 'Paged partner 55', older: 'Paged partner 5<', oldest: 'Paged partner 1<' },
    );
  });
});

describe.each(ENGINES)('dashboard paging of keys, placements, users and flags on %s', (engine) => {
  let t: TestApp;
  const now = Date.parse('2026-06-01T12:00:00Z');
  let operator: BrowserClient;

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => now });
    operator = await signedInPerson(t, now, {
      email: `lists-${engine}@example.com`,
      account: 'operator',
      role: 'admin',
    });
  }, 120_000);
  afterAll(async () => t?.close());

  it('pages the API keys newest first (a query joined to their usage)', async () => {
    const partner = await t.partners.createPartner('Key pager');
    for (let n = 1; n <= 55; n++) await t.partners.createKey(partner.id, `paged key ${n}`);
    const total = (await t.store.listApiKeys()).length;
    await expectTwoPages(
      operator,
      { path: '/keys', noun: 'keys', total },
      { newest: '>paged key 55</td>', older: '>paged key 5</td>', oldest: '>paged key 1</td>' },
    );
  });

  it('pages the placements newest first by the time each was added, not by name', async () => {
    // Names run against the order they are added in, so an alphabetical list fails this.
    const added = Date.now() + 60_000;
    for (let n = 1; n <= 55; n++) {
      const id = `paged_${String(100 - n).padStart(3, '0')}`;
      await t.store.addPlacement({ id, description: `Paged placement ${n}`, enabled: true }, added + n);
    }
    const total = (await t.store.listPlacements()).length;
    const first = await expectTwoPages(
      operator,
      { path: '/placements', noun: 'placements', total },
      // Added last, the 51st newest, added first.
      { newest: '<code>paged_045</code>', older: '<code>paged_095</code>', oldest: '<code>paged_099</code>' },
    );
    expect(first).toContain('<code>paged_094</code>'); // the 50th newest
  });

  it('pages the users newest first', async () => {
    for (let n = 1; n <= 55; n++) {
      await t.store.createUser(
        { email: `paged-${n}@example.com`, account: { kind: 'operator' }, role: 'viewer' },
        now,
      );
    }
    const total = (await t.store.listUsers()).length;
    await expectTwoPages(
      operator,
      { path: '/users', noun: 'users', total },
      {
        newest: '>paged-55@example.com</td>',
        older: '>paged-5@example.com</td>',
        oldest: '>paged-1@example.com</td>',
      },
    );
  });

  it('pages the open flags newest first', async () => {
    const partner = await t.partners.createPartner('Flag pager');
    const at = new Date(now).toISOString();
    for (let n = 1; n <= 55; n++) {
      const { key } = await t.partners.createKey(partner.id, `flagged key ${n}`);
      const evidence = {
        summary: `paged flag ${n}`,
        windowStart: at,
        windowEnd: at,
        measure: 1,
        threshold: 0.2,
      };
      await t.store.saveKeyFlag(
        { apiKeyId: key.id, partnerId: partner.id, signal: 'clicks without impressions', evidence },
        now,
      );
    }
    await expectTwoPages(
      operator,
      { path: '/flags', noun: 'open flags', total: 55 },
      { newest: 'paged flag 55<', older: 'paged flag 5<', oldest: 'paged flag 1<' },
    );
  });

  it('pages the reviewed flags newest first, on their own, keeping the open flags’ page', async () => {
    const partner = await t.partners.createPartner('Reviewed flag pager');
    const at = new Date(now).toISOString();
    for (let n = 1; n <= 55; n++) {
      const { key } = await t.partners.createKey(partner.id, `reviewed key ${n}`);
      const evidence = {
        summary: `reviewed flag ${n}`,
        windowStart: at,
        windowEnd: at,
        measure: 1,
        threshold: 0.2,
      };
      const { flag } = await t.store.saveKeyFlag(
        { apiKeyId: key.id, partnerId: partner.id, signal: 'burst', evidence },
        now,
      );
      await t.store.reviewKeyFlag(flag.id, { status: 'dismissed', at: now, by: 'cli', note: null });
    }
    const first = await operator.get('/flags');
    expect(first.status).toBe(200);
    expect(first.body).toContain('<caption>1–50 of 55 reviewed flags</caption>');
    expect(first.body).toContain('reviewed flag 55<');
    expect(first.body).not.toContain('reviewed flag 5<');
    expect(linksOf(first.body, 'Reviewed flags')).toEqual({
      'Next page': '/flags?reviewed=2',
      'Last page': '/flags?reviewed=2',
    });
    // Each list keeps the other's page in its links.
    const second = await operator.get('/flags?page=2&reviewed=2');
    expect(second.body).toContain('<caption>51–55 of 55 reviewed flags</caption>');
    expect(second.body).toContain('reviewed flag 1<');
    expect(second.body).not.toContain('reviewed flag 55<');
    expect(linksOf(second.body, 'Reviewed flags')).toEqual({
      'First page': '/flags?page=2',
      'Previous page': '/flags?page=2',
    });
    expect(
      Object.values(linksOf(second.body, 'Open flags')).every((href) => href.includes('reviewed=2')),
    ).toBe(true);
  });
});
