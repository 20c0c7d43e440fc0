import { micros } from '../../src/domain/money.js';
import type { PriceModel } from '../../src/domain/prices.js';
import type { Store } from '../../src/store/store.js';

/**
 * Sets a campaign's price through the store's own update, as a price change does: the price in
 * force on the campaign row, and a new row of its history (`campaign_prices`) from `since` on, which
 * the commit charges against. For tests of what prices bring about (costs, reports).
 */
export async function setCampaignPrice(
  store: Store,
  campaignId: number,
  price: { model: PriceModel | null; amountMicros: number | null; since: number },
): Promise<void> {
  const set =
    price.model === null || price.amountMicros === null
      ? null
      : { model: price.model, amountMicros: micros(price.amountMicros) };
  await store.updateCampaign(campaignId, { price: set }, price.since, 'test');
}
