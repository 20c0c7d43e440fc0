import type { CampaignStatus } from './campaigns.js';

/**
 * What a partner never receives, by its own choice or the operator's: campaigns in these content
 * categories, and every campaign of these advertisers. A partner, its live keys and the caller of a
 * request each carry them, so the serving index, tracking and the explainer read one rule.
 */
export interface PartnerBlocks {
  readonly blockedCategories: readonly string[];
  readonly blockedAdvertisers: readonly number[];
}

/** Blocks nothing: a fetch asked of the index without a partner. */
export const NO_BLOCKS: PartnerBlocks = { blockedCategories: [], blockedAdvertisers: [] };

/** Whether the partner blocks anything at all: without, a fetch needs no per-campaign check. */
export const blocksAnything = (blocks: PartnerBlocks): boolean =>
  blocks.blockedCategories.length > 0 || blocks.blockedAdvertisers.length > 0;

/** Which of the partner's blocks leaves the campaign out: its category, its advertiser, or none. */
export function blockOf(
  campaign: { readonly category: string | null; readonly advertiserId: number },
  blocks: PartnerBlocks,
): 'category' | 'advertiser' | undefined {
  if (campaign.category !== null && blocks.blockedCategories.includes(campaign.category)) return 'category';
  return blocks.blockedAdvertisers.includes(campaign.advertiserId) ? 'advertiser' : undefined;
}

/** Whether the partner never receives the campaign. */
export const isBlocked = (
  campaign: { readonly category: string | null; readonly advertiserId: number },
  blocks: PartnerBlocks,
): boolean => blockOf(campaign, blocks) !== undefined;

/**
 * The statuses of a campaign approved to serve, now or later: a partner may be served it, so its
 * advertiser's name is the partner's to see and to block.
 */
export const SERVABLE_STATUSES: readonly CampaignStatus[] = ['scheduled', 'running', 'paused'];
