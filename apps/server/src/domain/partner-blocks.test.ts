import { describe, expect, it } from 'vitest';
import { blockOf, blocksAnything, isBlocked, NO_BLOCKS } from './partner-blocks.js';

describe('what a partner blocks', () => {
  const blocks = { blockedCategories: ['politics'], blockedAdvertisers: [7] };

  it('blocks a campaign by its category first, then by its advertiser', () => {
    expect(blockOf({ category: 'politics', advertiserId: 7 }, blocks)).toBe('category');
    expect(blockOf({ category: 'sports', advertiserId: 7 }, blocks)).toBe('advertiser');
    expect(blockOf({ category: null, advertiserId: 7 }, blocks)).toBe('advertiser');
    expect(blockOf({ category: null, advertiserId: 8 }, blocks)).toBeUndefined();
    expect(isBlocked({ category: 'sports', advertiserId: 8 }, blocks)).toBe(false);
  });

  it('knows when nothing is blocked, so a fetch checks no campaign', () => {
    expect(blocksAnything(NO_BLOCKS)).toBe(false);
    expect(blocksAnything({ blockedCategories: [], blockedAdvertisers: [1] })).toBe(true);
    expect(blocksAnything({ blockedCategories: ['news'], blockedAdvertisers: [] })).toBe(true);
    expect(isBlocked({ category: 'news', advertiserId: 1 }, NO_BLOCKS)).toBe(false);
  });
});
