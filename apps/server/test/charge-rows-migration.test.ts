import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { migratingStore } from './helpers/migrating-store.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * Migration 030 on SQLite: charges appended the way migration 025 wrote them (a row for the price,
 * another for the partner's earnings) are folded by it, and read right if appended after it, so no
 * unit or micro is counted twice or lost across the upgrade.
 */
describe('migration 030 (one charge row a price, partner and share) on sqlite', () => {
  const stores = migratingStore();

  /** A price's units and spend, and its partners' earnings, as every reader sees them. */
  async function moneyOf(store: Store, priceId: number) {
    const price = await store.db
      .selectFrom('campaign_prices_live')
      .select(['billed', 'spend_micros'])
      .where('id', '=', priceId)
      .executeTakeFirstOrThrow();
    const earnings = await sql<{ spend: number; earnings: number }>`
      select sum(spend_micros) as spend, sum(earnings_micros) as earnings from partner_earnings_live
      where price_id = ${priceId}`.execute(store.db);
    return {
      billed: Number(price.billed),
      spend: Number(price.spend_micros),
      partnerSpend: Number(earnings.rows[0]?.spend ?? 0),
      partnerEarnings: Number(earnings.rows[0]?.earnings ?? 0),
    };
  }

  it('folds the rows appended before it, then counts a price from all its rows', async () => {
    await stores.create('sqlite');
    const at = Date.parse('2026-06-01T12:00:00Z');
    const before = await stores.open('029-frequency-caps');
    const { campaignIds } = await before.importCampaigns([{ name: 'upgrade', campaigns: [campaignInput()] }]);
    const campaignId = campaignIds[0];
    await setCampaignPrice(before, campaignId, { model: 'cpm', amountMicros: 1_500, since: at });
    const source = await newPartnerKey(before, 'upgrade partner', 'd-upgrade');
    const share = await before.addRevenueShare(
      { partnerId: source.partnerId, basisPoints: 5_000, effectiveFrom: 0, actor: 'test' },
      0,
    );
    const { id: priceId } = await before.db
      .selectFrom('campaign_prices')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .executeTakeFirstOrThrow();
    // What a batch of four units (1 + 2 + 1 + 2 micros, half of 3 of them earned) appended before
    // 030: one row for the price, one for the partner's earnings.
    await sql`insert into charge_deltas (price_id, partner_id, share_id, units, spend_micros, earnings_micros)
      values (${priceId}, null, null, 4, 6, 0), (${priceId}, ${source.partnerId}, ${share.id}, 0, 4, 2)`.execute(
      before.db,
    );
    const appended = await moneyOf(before, Number(priceId));
    expect(appended).toEqual({ billed: 4, spend: 6, partnerSpend: 4, partnerEarnings: 2 });
    const store = await stores.reopen();
    expect(await store.pendingMigrations()).toEqual([]);
    expect(await moneyOf(store, Number(priceId))).toEqual(appended);
    const left = await sql<{ n: number }>`select count(*) as n from charge_deltas`.execute(store.db);
    expect(Number(left.rows[0]?.n)).toBe(0);

    // Charged after it: two more units (1 + 2 micros), both the sharing partner's.
    await store.insertEvents([
      trackedEvent({ ...source, campaignId, occurredAt: at, priced: true }),
      trackedEvent({ ...source, campaignId, occurredAt: at, priced: true }),
    ]);
    expect(await moneyOf(store, Number(priceId))).toEqual({
      billed: 6,
      spend: 9,
      partnerSpend: 7,
      partnerEarnings: 3,
    });

    // Rows of the old format appended after it (a server of the previous release still running
    // while `placard migrate` applied it): two units, 1 + 2 micros, 1 of the partner's 2 earned.
    await sql`insert into charge_deltas (price_id, partner_id, share_id, units, spend_micros, earnings_micros)
      values (${priceId}, null, null, 2, 3, 0), (${priceId}, ${source.partnerId}, ${share.id}, 0, 2, 1)`.execute(
      store.db,
    );
    const both = { billed: 8, spend: 12, partnerSpend: 9, partnerEarnings: 4 };
    expect(await moneyOf(store, Number(priceId))).toEqual(both);
    await store.foldAppended();
    expect(await moneyOf(store, Number(priceId))).toEqual(both);
  });
});
