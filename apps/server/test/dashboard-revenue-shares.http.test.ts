import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { signedInPerson } from './helpers/people.js';

/**
 * A partner's revenue shares in the dashboard (D18): the operator sets one with a small form (a
 * percentage read to the basis point, a date), refused dates and values come back with the form as
 * typed; the partner's own people read their history and have no form; another partner's is missing.
 */
describe('revenue shares in the dashboard', () => {
  let t: TestApp;
  // 21:30 UTC is 22:30 in Paris: the billing day there is the 27th.
  const now = Date.parse('2026-11-27T21:30:00Z');
  let partnerId: number;
  let otherId: number;
  let operator: BrowserClient;
  let partner: BrowserClient;
  let page: string;

  beforeAll(async () => {
    t = await createTestApp({ clock: () => now, billingTimeZone: 'Europe/Paris' });
    partnerId = (await t.partners.findPartner('Test Partner')).id;
    otherId = (await t.partners.createPartner('Other Partner')).id;
    operator = await signedInPerson(t, now, {
      email: 'ops@example.com',
      account: 'operator',
      role: 'manager',
    });
    partner = await signedInPerson(t, now, {
      email: 'pub@example.com',
      account: `partner:${partnerId}`,
      role: 'admin',
    });
    page = `/partners/${partnerId}/revenue-shares`;
  });
  afterAll(async () => t?.close());

  it('shows an empty history saying what to do, to the operator with the form and to the partner without', async () => {
    const shown = await operator.get(page);
    expect(shown.status, shown.body).toBe(200);
    expect(shown.body).toContain('No revenue share yet, so this partner earns nothing. Set its share above');
    expect(shown.body).toContain(`action="${page}"`);
    expect(shown.body).toContain('From (YYYY-MM-DD, Europe/Paris)');
    const own = await partner.get(page);
    expect(own.status).toBe(200);
    expect(own.body).toContain('The operator sets your share; ask them.');
    expect(own.body).not.toContain(`action="${page}"`);
    expect((await operator.get('/partners')).body).toContain(`href="${page}"`);
    expect((await partner.get('/integration')).body).toContain(`href="${page}"`);
  });

  it('refuses a past date and a share past 100% beside their fields, keeping what was typed', async () => {
    const past = await operator.submit(page, page, { percent: '70.05', effectiveDate: '2026-11-26' });
    expect(past.status).toBe(422);
    expect(past.body).toContain(
      'must be today (2026-11-27, Europe/Paris) or later: earnings already made never change',
    );
    expect(past.body).toMatch(/id="percent"[^>]*value="70.05"/);
    expect(past.body).toMatch(
      /id="effectiveDate"[^>]*aria-invalid="true"[^>]*value="2026-11-26"|id="effectiveDate"[^>]*value="2026-11-26"[^>]*aria-invalid="true"/,
    );
    const tooMuch = await operator.submit(page, page, { percent: '100.5', effectiveDate: '2026-12-01' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body).toContain('must be at most 100');
    expect(tooMuch.body).toMatch(/id="percent"[^>]*value="100.5"/);
    expect(await t.store.listRevenueShares(partnerId)).toEqual([]);
  });

  it('sets a share read exactly to the basis point, and lists it for the operator and the partner', async () => {
    const set = await operator.submit(page, page, { percent: '70.29', effectiveDate: '2026-12-01' });
    expect(set.status, set.body).toBe(303);
    const today = await operator.submit(page, page, { percent: '65', effectiveDate: '2026-11-27' });
    expect(today.status, today.body).toBe(303);
    const stored = await t.store.listRevenueShares(partnerId);
    expect(stored.map((share) => [share.basisPoints, share.effectiveFrom])).toEqual([
      // Midnight of 1 December in Paris; today's from now.
      [7029, Date.parse('2026-11-30T23:00:00Z')],
      [6500, now],
    ]);
    const shown = (await operator.get(page)).body;
    expect(shown).toContain('In force now: 65.00%.');
    expect(shown).toMatch(/2026-12-01<\/td>\s*<td[^>]*>70.29%/);
    expect(shown).toContain('2026-12-01 00:00 Europe/Paris');
    expect(shown).toContain('ops@example.com');
    const own = (await partner.get(page)).body;
    expect(own).toContain('70.29%');
    expect(own).toContain('the operator');
    expect(own).not.toContain('ops@example.com');
  });

  it('refuses the partner’s people a share of their own, and shows another partner’s as missing', async () => {
    const refused = await partner.submit(page, page, { percent: '100', effectiveDate: '2026-12-01' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("only the operator may set a partner's revenue share");
    expect((await partner.get(`/partners/${otherId}/revenue-shares`)).status).toBe(404);
    expect(await t.store.listRevenueShares(partnerId)).toHaveLength(2);
  });
});
