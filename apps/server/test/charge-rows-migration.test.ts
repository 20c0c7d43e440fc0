import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { migratingStore } from './helpers/migrating-store.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * Migrations 030 and 031 on SQLite: charges appended the way migration 025 wrote them (a row for the
 * price, another for the partner's earnings) are folded by 030 and read right if appended after it;
 * those appended by 030's rule are folded by 031, after which the rollup rows carry the charges. No
 * unit or micro is counted twice or lost across either upgrade.
 */
describe('migrations 030 and 031 (charge rows merged, then carried by the rollup rows) on sqlite', () => {
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

  /** The rollups' events and money, as reports sum them. */
  async function rollupsOf(store: Store) {
    const rows = await sql<{ count: number; spend: number; earnings: number }>`
      select sum(count) as count, sum(spend_micros) as spend, sum(earnings_micros) as earnings
      from event_rollups_live`.execute(store.db);
    const row = rows.rows[0];
    return {
      count: Number(row?.count ?? 0),
      spend: Number(row?.spend ?? 0),
      earnings: Number(row?.earnings ?? 0),
    };
  }

  it('folds the rows appended before each, then counts a price from all its rows', async () => {
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
    const merged = await stores.reopen('030-charge-rows-merged');
    expect(await moneyOf(merged, Number(priceId))).toEqual(appended);
    const left = await sql<{ n: number }>`select count(*) as n from charge_deltas`.execute(merged.db);
    expect(Number(left.rows[0]?.n)).toBe(0);

    // Appended after 030 by its rule: two units (1 + 2 micros), both the sharing partner's, half
    // earned; then rows of the old format (a server of the previous release still running while
    // `placard migrate` applied 030): two units, 1 + 2 micros, 1 of the partner's 2 earned.
    await sql`insert into charge_deltas (price_id, partner_id, share_id, units, spend_micros, earnings_micros)
      values (${priceId}, ${source.partnerId}, ${share.id}, 2, 3, 1),
        (${priceId}, null, null, 2, 3, 0), (${priceId}, ${source.partnerId}, ${share.id}, 0, 2, 1)`.execute(
      merged.db,
    );
    const both = { billed: 8, spend: 12, partnerSpend: 9, partnerEarnings: 4 };
    expect(await moneyOf(merged, Number(priceId))).toEqual(both);
    // And a rollup row of two events appended, not folded.
    await sql`insert into event_rollup_deltas (minute, campaign_id, partner_id, placement_id, country, device,
        kind, verdict, reason, count, spend_micros, earnings_micros, with_viewer)
      values (${at}, ${campaignId}, ${source.partnerId}, 'header_banner', '', '', 'impression', 'counted', '',
        2, 3, 1, 0)`.execute(merged.db);
    const rollups = await rollupsOf(merged);
    expect(rollups).toEqual({ count: 2, spend: 3, earnings: 1 });

    // 031 folds what `charge_deltas` holds, drops it, and keeps the rollup row.
    const store = await stores.reopen();
    expect(await store.pendingMigrations()).toEqual([]);
    expect(await moneyOf(store, Number(priceId))).toEqual(both);
    expect(await rollupsOf(store)).toEqual(rollups);
    const tables = await sql<{ n: number }>`select count(*) as n from sqlite_master
      where name = 'charge_deltas'`.execute(store.db);
    expect(Number(tables.rows[0]?.n)).toBe(0);

    // Charged after 031: two more units (the 9th and 10th: 1 + 2 micros; 6 of the 12 earned) in the
    // rollup rows.
    await store.insertEvents([
      trackedEvent({ ...source, campaignId, occurredAt: at, priced: true }),
      trackedEvent({ ...source, campaignId, occurredAt: at, priced: true }),
    ]);
    const after = { billed: 10, spend: 15, partnerSpend: 12, partnerEarnings: 6 };
    expect(await moneyOf(store, Number(priceId))).toEqual(after);
    expect(await rollupsOf(store)).toEqual({ count: 4, spend: 6, earnings: 3 });
    await store.foldAppended();
    expect(await moneyOf(store, Number(priceId))).toEqual(after);
    expect(await rollupsOf(store)).toEqual({ count: 4, spend: 6, earnings: 3 });
  });
});
