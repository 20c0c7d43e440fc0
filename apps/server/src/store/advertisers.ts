// Advertisers. Part of the Store façade (store.ts): functions over a StoreContext.
import type { Selectable } from 'kysely';
import type { NumberedPage, NumberedPageRequest, PageRequest, Advertiser } from './rows.js';
import type { AdvertiserTable } from './schema.js';
import { numberedPage, page, type StoreContext } from './context.js';
import { insertRow, findRow, updateRow } from './table-rows.js';
import { budgetOf } from './advertiser-budgets.js';
import { isAdvertiserPricing, type AdvertiserPricing } from '../domain/prices.js';
import type { CampaignStatus } from '../domain/campaigns.js';

const toAdvertiser = (row: Selectable<AdvertiserTable>): Advertiser => ({
  id: row.id,
  name: row.name,
  budget: budgetOf(row),
  pricing: isAdvertiserPricing(row.pricing) ? row.pricing : 'operator',
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function createAdvertiser(
  ctx: StoreContext,
  name: string,
  now = Date.now(),
): Promise<Advertiser> {
  return toAdvertiser(await insertRow(ctx, 'advertisers', { name, created_at: now, updated_at: now }));
}

export function findAdvertiser(
  ctx: StoreContext,
  idOrName: number | string,
): Promise<Advertiser | undefined> {
  return findRow(ctx, 'advertisers', typeof idOrName === 'number' ? 'id' : 'name', idOrName, toAdvertiser);
}

export async function listAdvertisers(ctx: StoreContext, request: PageRequest = {}): Promise<Advertiser[]> {
  const rows = await page(ctx.db.selectFrom('advertisers').selectAll(), request, 'id').execute();
  return rows.map(toAdvertiser);
}

/** One numbered page of the advertisers, newest first, and how many there are. */
export async function advertiserPage(
  ctx: StoreContext,
  request: NumberedPageRequest,
): Promise<NumberedPage<Advertiser>> {
  return numberedPage(ctx.db.selectFrom('advertisers'), 'id', request, toAdvertiser);
}

export async function renameAdvertiser(
  ctx: StoreContext,
  id: number,
  name: string,
  now = Date.now(),
): Promise<void> {
  await updateRow(ctx, 'advertisers', id, { name, updated_at: now });
}

/** Sets who prices the advertiser's campaigns (D18). */
export async function setAdvertiserPricing(
  ctx: StoreContext,
  id: number,
  pricing: AdvertiserPricing,
  now = Date.now(),
): Promise<void> {
  await updateRow(ctx, 'advertisers', id, { pricing, updated_at: now });
}

/** How many campaigns each of these advertisers has; one left out of the answer has none. */
export async function countCampaigns(
  ctx: StoreContext,
  advertiserIds: readonly number[],
): Promise<Map<number, number>> {
  if (advertiserIds.length === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('campaigns')
    .select((eb) => ['advertiser_id', eb.fn.countAll().as('campaigns')])
    .where('advertiser_id', 'in', advertiserIds)
    .groupBy('advertiser_id')
    .execute();
  return new Map(rows.map((row) => [Number(row.advertiser_id), Number(row.campaigns)]));
}

/** The names of these advertisers, by id, in one query (a list shows them beside its rows). */
export async function advertiserNames(
  ctx: StoreContext,
  ids: readonly number[],
): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('advertisers')
    .select(['id', 'name'])
    .where('id', 'in', unique)
    .execute();
  return new Map(rows.map((row) => [Number(row.id), row.name]));
}

/**
 * The ids and names of the advertisers with a campaign in one of `statuses`, by name: those whose
 * campaigns a partner may be served, for the advertisers it may block.
 */
export async function advertisersWithCampaignsIn(
  ctx: StoreContext,
  statuses: readonly CampaignStatus[],
): Promise<Array<{ id: number; name: string }>> {
  const rows = await ctx.db
    .selectFrom('advertisers')
    .select(['id', 'name'])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('campaigns')
          .select('campaigns.id')
          .whereRef('campaigns.advertiser_id', '=', 'advertisers.id')
          .where('campaigns.status', 'in', [...statuses]),
      ),
    )
    .orderBy('name')
    .execute();
  return rows.map((row) => ({ id: Number(row.id), name: row.name }));
}
