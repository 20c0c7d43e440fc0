import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdvertiserService } from '../src/services/advertisers.js';
import { CLI_ACTOR } from '../src/services/audit.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';

/**
 * An advertiser's budgets in the dashboard (D18): the operator and the advertiser's own people set
 * them with a small form (amounts read exactly, empty for none; a refused amount comes back as typed
 * beside its field) and read the spend this month and in total against each; another advertiser's
 * page is missing; the advertisers list shows each budget and links to it.
 */
describe('advertiser budgets in the dashboard', () => {
  let t: TestApp;
  const now = Date.parse('2026-11-27T21:30:00Z');
  let advertiserId: number;
  let otherId: number;
  let operator: BrowserClient;
  let own: BrowserClient;
  let page: string;

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now });
    advertiserId = (await new AdvertiserService(t.store, CLI_ACTOR).create('Budget Ads')).id;
    otherId = (await new AdvertiserService(t.store, CLI_ACTOR).create('Other Ads')).id;
    operator = await signedInPerson(t, now, {
      email: 'ops@example.com',
      account: 'operator',
      role: 'manager',
    });
    own = await signedInPerson(t, now, {
      email: 'ads@example.com',
      account: `advertiser:${advertiserId}`,
      role: 'manager',
    });
    page = `/advertisers/${advertiserId}/budget`;
  });
  afterAll(async () => t?.close());

  it('sets the budgets read exactly, shows spend against them, and links them from the advertisers list', async () => {
    const set = await operator.submit(page, page, { budgetTotal: '500.00', budgetMonthly: '120.5' });
    expect(set.status, set.body).toBe(303);
    expect((await t.store.findAdvertiser(advertiserId))?.budget).toEqual({
      totalMicros: 500_000_000,
      monthlyMicros: 120_500_000,
    });
    const shown = (await operator.get(page)).body;
    expect(shown).toMatch(/id="budgetTotal"[^>]*value="500.00"/);
    expect(shown).toContain('This month (2026-11)');
    expect(shown).toMatch(
      /<td class="money">USD 120.50<\/td>\s*<td class="money">USD 0.00<\/td>\s*<td class="money">USD 120.50<\/td>/,
    );
    const list = (await operator.get('/advertisers')).body;
    expect(list).toContain(`href="${page}"`);
    expect(list).toContain('USD 500.00 in total, USD 120.50 a month');
  });

  it('lets the advertiser’s own people set theirs, keeps a refused amount as typed, and hides another’s', async () => {
    const refused = await own.submit(page, page, { budgetTotal: '12.3.4', budgetMonthly: '' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/id="budgetTotal"[^>]*value="12.3.4"/);
    const set = await own.submit(page, page, { budgetTotal: '', budgetMonthly: '80' });
    expect(set.status, set.body).toBe(303);
    expect((await t.store.findAdvertiser(advertiserId))?.budget).toEqual({
      totalMicros: null,
      monthlyMicros: 80_000_000,
    });
    expect((await own.get(`/advertisers/${otherId}/budget`)).status).toBe(404);
  });
});
