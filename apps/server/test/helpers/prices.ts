import type { PriceModel } from '../../src/domain/prices.js';
import type { Store } from '../../src/store/store.js';

/**
 * Sets a campaign's price in the store as a price change does: the price in force on the campaign
 * row, and a new row of its history (`campaign_prices`) from `since` on, which the commit charges
 * against. For tests of what prices bring about (costs, reports); the change itself is the price
 * management's.
 */
export async function setCampaignPrice(
  store: Store,
  campaignId: number,
  price: { model: PriceModel | null; amountMicros: number | null; since: number },
): Promise<void> {
  await store.db
    .updateTable('campaigns')
    .set({ price_model: price.model, price_micros: price.amountMicros })
    .where('id', '=', campaignId)
    .execute();
  await store.db
    .insertInto('campaign_prices')
    .values({
      campaign_id: campaignId,
      since: price.since,
      model: price.model,
      amount_micros: price.amountMicros,
      actor: 'test',
    })
    .execute();
}
