import fc from 'fast-check';
import { HELD_UNTIL_RAISED } from '../domain/advertiser-budgets.js';
import { describe, expect, it } from 'vitest';
import { NO_BUDGET, validateCampaignInput, type Campaign, type CampaignStatus } from '../domain/campaigns.js';
import type { FetchQuery } from '../domain/requests.js';
import { DEVICES, type Device } from '../domain/targeting.js';
import { NO_BLOCKS, type PartnerBlocks } from '../domain/partner-blocks.js';
import { CampaignIndex } from './campaign-index.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const MINUTE = 60_000;
/** `sidebar_top` is disabled: campaigns may name it, fetches never find it. */
const PLACEMENTS = ['header_banner', 'article_inline', 'sidebar_top'];
const ENABLED = new Set(['header_banner', 'article_inline']);
const COUNTRIES = ['US', 'GB', 'DE'];
const STATUSES: CampaignStatus[] = ['running', 'running', 'running', 'paused', 'draft', 'completed'];

/** A time around now: none, past or future by a few minutes. */
const instant = fc.option(
  fc.integer({ min: -3, max: 3 }).map((minutes) => NOW + minutes * MINUTE),
  { nil: null },
);

/** The fields a change can set; any of them, each from the values that matter to the index. */
const fields = fc.record(
  {
    status: fc.constantFrom(...STATUSES),
    priority: fc.integer({ min: 0, max: 2 }),
    // Mostly light, sometimes heavy: skewed groups take the binary-search path of the draw.
    weight: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(100)),
    placements: fc.subarray(PLACEMENTS, { minLength: 1 }),
    countries: fc.subarray(COUNTRIES),
    devices: fc.subarray([...DEVICES] as Device[]),
    category: fc.constantFrom(null, 'news', 'sports'),
    advertiserId: fc.constantFrom(1, 2),
    startAt: instant,
    endAt: instant,
    cappedUntil: instant,
  },
  { requiredKeys: [] },
);
type Fields = Partial<Pick<Campaign, 'status' | 'priority' | 'weight' | 'placements' | 'countries'>> &
  Partial<Pick<Campaign, 'devices' | 'category' | 'startAt' | 'endAt' | 'cappedUntil' | 'budgetHeldUntil'>> &
  Partial<Pick<Campaign, 'advertiserId'>>;

/** A running campaign in `header_banner`, as validated input gives it, with `changes`. */
function campaign(id: number, changes: Fields): Campaign {
  const input = { title: `Campaign ${id}`, destinationUrl: `https://example.com/${id}`, status: 'running' };
  const { value } = validateCampaignInput({ ...input, placements: ['header_banner'] }, '');
  const stored = {
    id,
    advertiserId: 1,
    cappedUntil: null,
    budgetHeldUntil: null,
    rejectionReason: null,
    createdAt: NOW,
    updatedAt: NOW,
  };
  return {
    ...value!,
    price: value!.price ?? null,
    budget: value!.budget ?? NO_BUDGET,
    frequencyCaps: value!.frequencyCaps ?? [],
    schedule: value!.schedule ?? null,
    ...stored,
    ...changes,
  };
}

/** A change: to one campaign's fields (a new id creates it), its removal, or time passing. */
const change = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), id: fc.integer({ min: 1, max: 12 }), fields }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant('time' as const), minutes: fc.integer({ min: 1, max: 4 }) }),
);

/** What a partner may block: nothing, a category, an advertiser. */
const BLOCKS: PartnerBlocks[] = [
  NO_BLOCKS,
  { blockedCategories: ['news'], blockedAdvertisers: [] },
  { blockedCategories: [], blockedAdvertisers: [2] },
];

/** Every fetch the index can be asked, with and without blocks. */
function* queries(): Generator<[FetchQuery, PartnerBlocks]> {
  for (const placement of [...PLACEMENTS, 'footer_banner'])
    for (const location of [undefined, ...COUNTRIES, 'FR'])
      for (const device of [undefined, ...DEVICES])
        for (const limit of [1, 3, 100])
          for (const blocked of BLOCKS) yield [{ placement, location, device, limit }, blocked];
}

/** A small seeded generator, so both indexes draw with the same random numbers. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647;
}

/** Fails unless the two indexes answer every fetch and tracking look-up alike at `now`. */
function expectSameAnswers(updated: CampaignIndex, built: CampaignIndex, now: number): void {
  expect(updated.size).toBe(built.size);
  expect(updated.nextBoundaryAt).toBeLessThanOrEqual(built.nextBoundaryAt);
  for (let id = 1; id <= 12; id++) expect(updated.campaign(id, now)).toEqual(built.campaign(id, now));
  let seed = 1;
  for (const [query, blocked] of queries()) {
    seed++;
    const answer = (index: CampaignIndex) =>
      index.select(query, now, blocked, seeded(seed)).map((served) => served.id);
    expect(answer(updated), JSON.stringify({ query, blocked })).toEqual(answer(built));
  }
}

describe('campaign index changed in place', () => {
  it('answers every fetch like an index built from scratch, after any sequence of changes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 12 }), fields), { maxLength: 12 }),
        fc.array(change, { minLength: 1, maxLength: 25 }),
        (initial, changes) => {
          let now = NOW;
          const campaigns = new Map<number, Campaign>();
          for (const [id, set] of initial) campaigns.set(id, campaign(id, set));
          const sorted = () => [...campaigns.values()].sort((a, b) => a.id - b.id);
          const index = CampaignIndex.from(ENABLED, sorted(), now);
          for (const step of changes) {
            if (step.kind === 'time') {
              now += step.minutes * MINUTE;
              for (const id of index.dueCampaigns(now)) index.apply(id, campaigns.get(id), now);
            } else if (step.kind === 'delete') {
              campaigns.delete(step.id);
              index.apply(step.id, undefined, now);
            } else {
              const next = { ...(campaigns.get(step.id) ?? campaign(step.id, {})), ...step.fields };
              campaigns.set(step.id, next);
              index.apply(step.id, next, now);
            }
          }
          expectSameAnswers(index, CampaignIndex.from(ENABLED, sorted(), now), now);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves out the campaigns of an advertiser the partner blocks, and those in a category it blocks', () => {
    const index = CampaignIndex.from(
      ENABLED,
      [campaign(1, {}), campaign(2, { advertiserId: 2 }), campaign(3, { advertiserId: 2, category: 'news' })],
      NOW,
    );
    const served = (blocks: PartnerBlocks) =>
      index
        .select({ placement: 'header_banner', limit: 10 }, NOW, blocks)
        .map((c) => c.id)
        .sort();
    expect(served(NO_BLOCKS)).toEqual([1, 2, 3]);
    expect(served({ blockedCategories: [], blockedAdvertisers: [2] })).toEqual([1]);
    expect(served({ blockedCategories: ['news'], blockedAdvertisers: [] })).toEqual([1, 2]);
    expect(served({ blockedCategories: [], blockedAdvertisers: [1, 2] })).toEqual([]);
  });

  it('takes a campaign out when its daily cap holds and back when the hold ends', () => {
    const index = CampaignIndex.from(ENABLED, [campaign(1, {}), campaign(2, {})], NOW);
    const held = campaign(1, { cappedUntil: NOW + MINUTE });
    index.apply(1, held, NOW);
    const served = () =>
      index.select({ placement: 'header_banner', limit: 10 }, NOW + MINUTE).map((c) => c.id);
    expect(served()).toEqual([2]);
    expect(index.nextBoundaryAt).toBe(NOW + MINUTE);
    expect(index.dueCampaigns(NOW + MINUTE - 1)).toEqual([]);
    expect(index.dueCampaigns(NOW + MINUTE)).toEqual([1]);
    index.apply(1, held, NOW + MINUTE);
    expect(served().sort()).toEqual([1, 2]);
    expect(index.nextBoundaryAt).toBe(Infinity);
  });

  it("takes a campaign out while its advertiser's budget holds it: a month's until it ends, a total's until changed", () => {
    const index = CampaignIndex.from(ENABLED, [campaign(1, {}), campaign(2, {})], NOW);
    const served = (at: number) =>
      index
        .select({ placement: 'header_banner', limit: 10 }, at)
        .map((c) => c.id)
        .sort();
    index.apply(1, campaign(1, { budgetHeldUntil: NOW + MINUTE }), NOW);
    index.apply(2, campaign(2, { budgetHeldUntil: HELD_UNTIL_RAISED }), NOW);
    expect(served(NOW)).toEqual([]);
    // Only the month's hold ends by itself; the total budget's waits for the change feed.
    expect(index.nextBoundaryAt).toBe(NOW + MINUTE);
    expect(index.dueCampaigns(NOW + MINUTE)).toEqual([1]);
    index.apply(1, campaign(1, { budgetHeldUntil: NOW + MINUTE }), NOW + MINUTE);
    expect(served(NOW + MINUTE)).toEqual([1]);
    expect(index.nextBoundaryAt).toBe(Infinity);
    index.apply(2, campaign(2, { budgetHeldUntil: null }), NOW + MINUTE);
    expect(served(NOW + MINUTE)).toEqual([1, 2]);
  });

  it('draws a campaign released gradually (D16) at its chance, the others in its place, and fully again at 1', () => {
    // A priority above the other's: drawn first whenever its chance lets it.
    const gradual = campaign(1, { priority: 2 });
    const index = CampaignIndex.from(ENABLED, [gradual, campaign(2, { priority: 0 })], NOW);
    index.apply(1, gradual, NOW, { held: false, weightFactor: 1, chance: 0.1 });
    const first = () => index.select({ placement: 'header_banner', limit: 1 }, NOW)[0]?.id;
    let drawn = 0;
    for (let i = 0; i < 10_000; i++) if (first() === 1) drawn++;
    // 1,000 expected; the bounds are more than six standard deviations (30) away.
    expect(drawn).toBeGreaterThan(800);
    expect(drawn).toBeLessThan(1200);
    index.apply(1, gradual, NOW, { held: false, weightFactor: 1, chance: 1 });
    for (let i = 0; i < 100; i++) expect(first()).toBe(1);
  });
});
