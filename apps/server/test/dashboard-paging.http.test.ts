import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlagSignal } from '../src/domain/key-flags.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { ENGINES, type Engine } from './helpers/engines.js';
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
 * A list of `total` rows (51 to 100) at `path`, 55 of them added by the test (the nth shown as
 * `row(n)`), shows the first 50 with the count and links to its second page, which shows the rest:
 * the 55th added is on the first page, the 5th (the 51st newest) is not, and the 1st is on the second.
 */
async function expectTwoPages(
  client: BrowserClient,
  list: { path: string; noun: string; total: number },
  row: (n: number) => string,
): Promise<string> {
  const { path, noun, total } = list;
  const first = await client.get(path);
  expect(first.status).toBe(200);
  expect(first.body).toContain(`<caption>1–50 of ${total} ${noun}</caption>`);
  expect(first.body).toContain(row(55));
  expect(first.body).not.toContain(row(5));
  expect(links(first.body)).toEqual({ 'Next page': `${path}?page=2`, 'Last page': `${path}?page=2` });
  const second = await client.get(`${path}?page=2`);
  expect(second.body).toContain(`<caption>51–${total} of ${total} ${noun}</caption>`);
  expect(second.body).toContain(row(1));
  return first.body;
}

/** The time the apps' clocks stand at. */
const NOW = Date.parse('2026-06-01T12:00:00Z');

/** An app on `engine` with its clock standing at `NOW`, and the operator's person `email` signed in with `role`. */
async function appWithOperator(engine: Engine, email: string, role: string) {
  const t = await createTestApp({ engine, clock: () => NOW });
  return { t, operator: await signedInPerson(t, NOW, { email, account: 'operator', role }) };
}

/** The dashboard's lists page through everything, newest first, with a count and plain links. */
describe.each(ENGINES)('dashboard paging on %s', (engine) => {
  let t: TestApp;
  let operator: BrowserClient;
  let ids: number[];
  /** More than the 1,000 the campaigns page once read, and not a multiple of a page. */
  const CAMPAIGNS = 1_060;

  beforeAll(async () => {
    ({ t, operator } = await appWithOperator(engine, `pager-${engine}@example.com`, 'manager'));
    ids = await t.addCampaigns(
      Array.from({ length: CAMPAIGNS }, (_, n) => campaign({ title: `Paged ${n + 1}` })),
      'Paging Ads',
    );
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
    for (let n = 1; n <= 55; n++) await t.store.createAdvertiser(`Paged advertiser ${n}`, NOW);
    const total = (await t.store.listAdvertisers({ limit: 1_000 })).length;
    await expectTwoPages(
      operator,
      { path: '/advertisers', noun: 'advertisers', total },
      (n) => `>Paged advertiser ${n}</td>`,
    );
  });

  it('pages the partners newest first', async () => {
    for (let n = 1; n <= 55; n++) await t.partners.createPartner(`Paged partner ${n}`);
    const total = (await t.store.listPartners()).length;
    await expectTwoPages(
      operator,
      { path: '/partners', noun: 'partners', total },
      (n) => `Paged partner ${n}<`,
    );
  });
});

describe.each(ENGINES)('dashboard paging of keys, placements, users and flags on %s', (engine) => {
  let t: TestApp;
  let operator: BrowserClient;

  beforeAll(async () => {
    ({ t, operator } = await appWithOperator(engine, `lists-${engine}@example.com`, 'admin'));
  }, 120_000);
  afterAll(async () => t?.close());

  /**
   * Flags each of 55 new keys of a new partner with `signal`: the nth key labelled `${keys} ${n}`,
   * its flag summed up as `${flags} ${n}`. The flags, in the order they were raised.
   */
  async function flagKeys(partnerName: string, signal: FlagSignal, labels: { keys: string; flags: string }) {
    const partner = await t.partners.createPartner(partnerName);
    const at = new Date(NOW).toISOString();
    const flags = [];
    for (let n = 1; n <= 55; n++) {
      const { key } = await t.partners.createKey(partner.id, `${labels.keys} ${n}`);
      const evidence = {
        summary: `${labels.flags} ${n}`,
        windowStart: at,
        windowEnd: at,
        measure: 1,
        threshold: 0.2,
      };
      const { flag } = await t.store.saveKeyFlag(
        { apiKeyId: key.id, partnerId: partner.id, signal, evidence },
        NOW,
      );
      flags.push(flag);
    }
    return flags;
  }

  it('pages the API keys newest first (a query joined to their usage)', async () => {
    const partner = await t.partners.createPartner('Key pager');
    for (let n = 1; n <= 55; n++) await t.partners.createKey(partner.id, `paged key ${n}`);
    const total = (await t.store.listApiKeys()).length;
    await expectTwoPages(operator, { path: '/keys', noun: 'keys', total }, (n) => `>paged key ${n}</td>`);
  });

  it('pages the placements newest first by the time each was added, not by name', async () => {
    // Names run against the order they are added in, so an alphabetical list fails this.
    const added = Date.now() + 60_000;
    const idOf = (n: number) => `paged_${String(100 - n).padStart(3, '0')}`;
    for (let n = 1; n <= 55; n++)
      await t.store.addPlacement(
        { id: idOf(n), description: `Paged placement ${n}`, enabled: true },
        added + n,
      );
    const total = (await t.store.listPlacements()).length;
    const first = await expectTwoPages(
      operator,
      { path: '/placements', noun: 'placements', total },
      (n) => `<code>${idOf(n)}</code>`, // added last paged_045, the 51st newest paged_095, added first paged_099
    );
    expect(first).toContain('<code>paged_094</code>'); // the 50th newest
  });

  it('pages the users newest first', async () => {
    for (let n = 1; n <= 55; n++) {
      await t.store.createUser(
        { email: `paged-${n}@example.com`, account: { kind: 'operator' }, role: 'viewer' },
        NOW,
      );
    }
    const total = (await t.store.listUsers()).length;
    await expectTwoPages(
      operator,
      { path: '/users', noun: 'users', total },
      (n) => `>paged-${n}@example.com</td>`,
    );
  });

  it('pages the open flags newest first', async () => {
    await flagKeys('Flag pager', 'clicks without impressions', { keys: 'flagged key', flags: 'paged flag' });
    await expectTwoPages(
      operator,
      { path: '/flags', noun: 'open flags', total: 55 },
      (n) => `paged flag ${n}<`,
    );
  });

  it('pages the reviewed flags newest first, on their own, keeping the open flags’ page', async () => {
    const flags = await flagKeys('Reviewed flag pager', 'burst', {
      keys: 'reviewed key',
      flags: 'reviewed flag',
    });
    for (const flag of flags)
      await t.store.reviewKeyFlag(flag.id, { status: 'dismissed', at: NOW, by: 'cli', note: null });
    /** The reviewed flags at `path`: the caption counts `rows`, flag `shown` is there and `notShown` not. */
    const expectReviewedPage = async (
      path: string,
      rows: string,
      [shown, notShown]: [number, number],
      links: Record<string, string>,
    ) => {
      const page = await operator.get(path);
      expect(page.status).toBe(200);
      expect(page.body).toContain(`<caption>${rows} of 55 reviewed flags</caption>`);
      expect(page.body).toContain(`reviewed flag ${shown}<`);
      expect(page.body).not.toContain(`reviewed flag ${notShown}<`);
      expect(linksOf(page.body, 'Reviewed flags')).toEqual(links);
      return page.body;
    };
    await expectReviewedPage('/flags', '1–50', [55, 5], {
      'Next page': '/flags?reviewed=2',
      'Last page': '/flags?reviewed=2',
    });
    // Each list keeps the other's page in its links.
    const second = await expectReviewedPage('/flags?page=2&reviewed=2', '51–55', [1, 55], {
      'First page': '/flags?page=2',
      'Previous page': '/flags?page=2',
    });
    expect(Object.values(linksOf(second, 'Open flags')).every((href) => href.includes('reviewed=2'))).toBe(
      true,
    );
  });
});
