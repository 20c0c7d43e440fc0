import { describe, expect, it } from 'vitest';
import { HELD_UNTIL_RAISED } from './advertiser-budgets.js';
import type { Campaign } from './campaigns.js';
import { NO_CAPS } from './campaigns.js';
import { explainNotServing, notServingReasons, reasonInWords } from './serving-reasons.js';

const now = Date.parse('2026-06-01T12:00:00Z');
const running: Campaign = {
  id: 1,
  advertiserId: 1,
  title: 'Offer',
  description: null,
  category: null,
  destinationUrl: 'https://example.com/',
  status: 'running',
  priority: 0,
  weight: 1,
  placements: ['header_banner', 'sidebar_top'],
  countries: [],
  devices: [],
  startAt: null,
  endAt: null,
  timeZone: 'UTC',
  caps: NO_CAPS,
  pacing: 'asap',
  frequencyCaps: [],
  schedule: null,
  price: null,
  budget: { totalMicros: null, dailyMicros: null },
  cappedUntil: null,
  budgetHeldUntil: null,
  rejectionReason: null,
  createdAt: now,
  updatedAt: now,
};
const enabled = new Set(['header_banner', 'sidebar_top']);
const iso = (ms: number) => new Date(ms).toISOString();
const reasons = (changes: Partial<Campaign>, placements = enabled) =>
  notServingReasons({ ...running, ...changes }, now, placements, iso);

describe('why a campaign is not serving', () => {
  it('has no reason for a running campaign in its flight with an enabled placement', () => {
    expect(reasons({})).toEqual([]);
    expect(reasons({}, new Set(['sidebar_top']))).toEqual([]);
  });

  it('names the status and what to do for every status but running', () => {
    expect(reasons({ status: 'draft' })[0]).toContain('submit it for review');
    expect(reasons({ status: 'pending_review' })[0]).toContain('review');
    expect(reasons({ status: 'rejected', rejectionReason: 'claims unverified' })[0]).toContain(
      'rejected it: claims unverified. Edit it',
    );
    expect(reasons({ status: 'scheduled', startAt: now + 3_600_000 })[0]).toContain(
      '2026-06-01T13:00:00.000Z',
    );
    expect(reasons({ status: 'paused' })[0]).toContain('resume it');
    expect(reasons({ status: 'completed' })[0]).toContain('completed');
    expect(reasons({ status: 'archived' })[0]).toContain('archived');
  });

  it('names an ended flight, a daily cap holding it and placements all disabled, together', () => {
    expect(reasons({ endAt: now - 1, cappedUntil: now + 60_000 }, new Set())).toEqual([
      'Its flight ended at 2026-06-01T11:59:59.999Z.',
      'A daily cap was reached: it is served again from 2026-06-01T12:01:00.000Z.',
      'None of its placements is enabled (header_banner, sidebar_top): ask the operator.',
    ]);
    expect(reasons({ cappedUntil: now })).toEqual([]);
  });

  it("names its advertiser's budget holding it: the monthly one until the month ends, the total one until raised", () => {
    expect(reasons({ budgetHeldUntil: now + 60_000 })).toEqual([
      'Its advertiser’s monthly budget is spent: it is served again from 2026-06-01T12:01:00.000Z.',
    ]);
    expect(reasons({ budgetHeldUntil: HELD_UNTIL_RAISED })).toEqual([
      'Its advertiser’s total budget is spent: it is served again once the budget is raised.',
    ]);
    expect(reasons({ budgetHeldUntil: now })).toEqual([]);
  });

  it('names a blocked category and a blocked advertiser of the partner whose fetch it explains', () => {
    const blocks = { blockedCategories: ['news'], blockedAdvertisers: [1] };
    const found = explainNotServing({ ...running, category: 'news' }, now, enabled, { blocks });
    expect(found).toEqual([
      { code: 'category_blocked', category: 'news' },
      { code: 'advertiser_blocked', advertiserId: 1 },
    ]);
    expect(reasonInWords({ code: 'advertiser_blocked', advertiserId: 1 }, iso)).toBe(
      'The partner blocks its advertiser, advertiser 1.',
    );
    expect(reasonInWords({ code: 'advertiser_blocked', advertiserId: 1, advertiserName: 'Acme' }, iso)).toBe(
      'The partner blocks its advertiser, Acme.',
    );
    // The campaign page's reasons hold for every fetch: no partner's blocks among them.
    expect(reasons({ category: 'news' })).toEqual([]);
  });
});
