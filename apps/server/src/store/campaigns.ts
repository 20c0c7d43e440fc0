// Campaigns with their placements: import, creation, edits, status moves, and the pages the serving
// index loads. Part of the Store façade (store.ts): functions over a StoreContext.
import { sql, type Selectable } from 'kysely';
import type { Campaign, CampaignInput, CampaignStatus } from '../domain/campaigns.js';
import { micros } from '../domain/money.js';
import { priceOf, samePrice, type Price } from '../domain/prices.js';
import {
  campaignColumns,
  toCampaign,
  type AdvertiserImport,
  type ImportSummary,
  type CampaignFilter,
  type NumberedPage,
  type NumberedPageRequest,
  type PageRequest,
  type CampaignPatch,
  type CampaignSort,
  type CampaignPriceRecord,
} from './rows.js';
import type { CampaignTable } from './schema.js';
import { DEFAULT_PAGE, numberedPage, transact, type StoreContext } from './context.js';
import { createAdvertiser, findAdvertiser } from './advertisers.js';
import { fillSpendCounters } from './charges.js';

/**
 * Imports advertisers (matched by name, created when new) and their campaigns in one transaction:
 * either everything is stored or nothing is. `actor` (as the audit log names it) set their prices.
 */
export async function importCampaigns(
  ctx: StoreContext,
  advertisers: AdvertiserImport[],
  now = Date.now(),
  actor = 'system',
): Promise<ImportSummary> {
  return transact(ctx, async (tx) => {
    const summary: ImportSummary = {
      advertisersCreated: 0,
      advertisersExisting: 0,
      campaignsCreated: 0,
      campaignIds: [],
    };
    for (const advertiser of advertisers) {
      let existing = await findAdvertiser(tx, advertiser.name);
      if (existing) summary.advertisersExisting++;
      else {
        existing = await createAdvertiser(tx, advertiser.name, now);
        summary.advertisersCreated++;
      }
      for (const id of await createCampaigns(tx, existing.id, advertiser.campaigns, now, actor))
        summary.campaignIds.push(id);
      summary.campaignsCreated += advertiser.campaigns.length;
    }
    return summary;
  });
}

/**
 * Inserts a campaign with its placements and its price (set by `actor`, as the audit log names it);
 * returns its id.
 */
export async function createCampaign(
  ctx: StoreContext,
  advertiserId: number,
  input: CampaignInput,
  now = Date.now(),
  actor = 'system',
): Promise<number> {
  return transact(
    ctx,
    async (tx) => (await createCampaigns(tx, advertiserId, [input], now, actor))[0] as number,
  );
}

/** Campaigns per insert statement: within both engines' limits on bound parameters. */
const INSERT_CHUNK = 500;

/**
 * Inserts campaigns of one advertiser with their placements, a few hundred per statement (an
 * import of 100,000 one statement at a time spent most of its time in round trips); returns their
 * ids in the order given. Call it in a transaction: the rows of one statement then get ids in the
 * order they are inserted (SQLite's next rowid, PostgreSQL's sequence drawn row by row), so the
 * returned ids, sorted, line up with the inputs. A priced campaign gets its first `campaign_prices`
 * row (set by `actor`) in the same transaction, so a batch's commit never finds one without the other.
 */
export async function createCampaigns(
  ctx: StoreContext,
  advertiserId: number,
  inputs: readonly CampaignInput[],
  now = Date.now(),
  actor = 'system',
): Promise<number[]> {
  const ids: number[] = [];
  for (let start = 0; start < inputs.length; start += INSERT_CHUNK) {
    const chunk = inputs.slice(start, start + INSERT_CHUNK);
    const rows = await ctx.db
      .insertInto('campaigns')
      .values(
        chunk.map((input) => ({
          ...campaignColumns(input),
          advertiser_id: advertiserId,
          title: input.title,
          destination_url: input.destinationUrl,
          status: input.status,
          priority: input.priority,
          weight: input.weight,
          countries: JSON.stringify(input.countries),
          devices: JSON.stringify(input.devices),
          created_at: now,
          updated_at: now,
        })),
      )
      .returning('id')
      .execute();
    const chunkIds = rows.map((row) => row.id).sort((a, b) => a - b);
    const placements = chunk.flatMap((input, i) =>
      input.placements.map((placement_id) => ({ campaign_id: chunkIds[i] as number, placement_id })),
    );
    for (let at = 0; at < placements.length; at += INSERT_CHUNK)
      await ctx.db
        .insertInto('campaign_placements')
        .values(placements.slice(at, at + INSERT_CHUNK))
        .execute();
    const prices = chunk.flatMap((input, i) =>
      input.price ? [priceRow(chunkIds[i] as number, input.price, now, actor)] : [],
    );
    for (let at = 0; at < prices.length; at += INSERT_CHUNK)
      await ctx.db
        .insertInto('campaign_prices')
        .values(prices.slice(at, at + INSERT_CHUNK))
        .execute();
    for (const id of chunkIds) ids.push(id);
  }
  return ids;
}

/**
 * Campaigns by id, in id order, read 500 at a time by id list: imports read thousands of
 * neighbours, the serving index a few changed campaigns that may lie far apart. Missing ids are
 * left out.
 */
export async function getCampaigns(ctx: StoreContext, ids: readonly number[]): Promise<Campaign[]> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const found: Campaign[] = [];
  for (let start = 0; start < sorted.length; start += 500) {
    const rows = await ctx.db
      .selectFrom('campaigns')
      .selectAll()
      .where('id', 'in', sorted.slice(start, start + 500))
      .orderBy('id')
      .execute();
    for (const campaign of await withPlacements(ctx, rows)) found.push(campaign);
  }
  return found;
}

export async function getCampaign(ctx: StoreContext, id: number): Promise<Campaign | undefined> {
  const [campaign] = await queryCampaigns(ctx, { id }, {});
  return campaign;
}

export async function listCampaigns(
  ctx: StoreContext,
  filter: CampaignFilter = {},
  request: PageRequest = { limit: 1_000_000 },
): Promise<Campaign[]> {
  return queryCampaigns(ctx, filter, request);
}

/**
 * Running campaigns with their placements, in pages ordered by id: the input of the serving index.
 * Paging keeps memory flat however many campaigns there are.
 */
export async function* runningCampaignPages(ctx: StoreContext, pageSize = 5000): AsyncGenerator<Campaign[]> {
  let after = 0;
  for (;;) {
    const found = await queryCampaigns(ctx, { status: 'running' }, { after, limit: pageSize });
    if (found.length === 0) return;
    yield found;
    after = (found[found.length - 1] as Campaign).id;
  }
}

/**
 * Campaigns whose start or end time has come (scheduled to start, or ending while live). Two
 * queries, each answered from a (status, time) index, rather than one OR that scans every row.
 */
export async function campaignsDueForTimedStatus(ctx: StoreContext, now: number): Promise<Campaign[]> {
  const starting = await ctx.db
    .selectFrom('campaigns')
    .selectAll()
    .where('status', '=', 'scheduled')
    .where((eb) => eb.or([eb('start_at', 'is', null), eb('start_at', '<=', now)]))
    .limit(1000)
    .execute();
  const ending = await ctx.db
    .selectFrom('campaigns')
    .selectAll()
    .where('status', 'in', ['scheduled', 'running', 'paused'])
    .where('end_at', '<=', now)
    .limit(1000)
    .execute();
  const byId = new Map([...starting, ...ending].map((row) => [row.id, row]));
  return withPlacements(
    ctx,
    [...byId.values()].sort((a, b) => a.id - b.id),
  );
}

/**
 * Moves a campaign from one status to another only if it is still in the first: safe when
 * several instances run the same clock job. Returns whether this call made the move.
 */
export async function moveCampaignStatus(
  ctx: StoreContext,
  id: number,
  from: CampaignStatus,
  to: CampaignStatus,
  now: number,
): Promise<boolean> {
  const result = await ctx.db
    .updateTable('campaigns')
    .set({ status: to, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The campaigns that `filter` selects, as a query to read rows or count them from. */
function campaignsWhere(ctx: StoreContext, filter: CampaignFilter & { id?: number }) {
  let query = ctx.db.selectFrom('campaigns');
  if (filter.id !== undefined) query = query.where('campaigns.id', '=', filter.id);
  if (filter.status !== undefined) query = query.where('campaigns.status', '=', filter.status);
  if (filter.advertiserId !== undefined)
    query = query.where('campaigns.advertiser_id', '=', filter.advertiserId);
  const search = filter.search?.trim();
  if (search) {
    // LIKE with its wildcards escaped, on the lower-cased title: the same matches on both engines.
    const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const id = /^#?(\d{1,15})$/.exec(search)?.[1];
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['campaigns.title']), 'like', sql<string>`${pattern} escape '\\'`),
        ...(id === undefined ? [] : [eb('campaigns.id', '=', Number(id))]),
      ]),
    );
  }
  if (filter.placement !== undefined) {
    const placement = filter.placement;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('campaign_placements as cp')
          .select('cp.campaign_id')
          .whereRef('cp.campaign_id', '=', 'campaigns.id')
          .where('cp.placement_id', '=', placement),
      ),
    );
  }
  return query;
}

async function queryCampaigns(
  ctx: StoreContext,
  filter: CampaignFilter & { id?: number },
  request: PageRequest & { upTo?: number },
): Promise<Campaign[]> {
  let query = campaignsWhere(ctx, filter).selectAll('campaigns');
  if (request.after !== undefined) query = query.where('campaigns.id', '>', request.after);
  if (request.upTo !== undefined) query = query.where('campaigns.id', '<=', request.upTo);
  query = query.orderBy('campaigns.id').limit(request.limit ?? DEFAULT_PAGE);
  return withPlacements(ctx, await query.execute());
}

/**
 * One numbered page of the campaigns `filter` selects, in the order `sort` asks (newest first by
 * default), and how many there are. The id breaks ties, so pages never overlap. Sorted by
 * delivery, it reads `campaign_delivery` (migration 018): the counts up to the last quarter hour
 * summed, one row per campaign, rather than summing rollups.
 */
export async function campaignPage(
  ctx: StoreContext,
  filter: CampaignFilter,
  request: NumberedPageRequest,
  sort: CampaignSort = { by: 'newest', descending: true },
): Promise<NumberedPage<Campaign>> {
  if (sort.by === 'newest' && sort.descending) {
    const page = await numberedPage(
      campaignsWhere(ctx, filter),
      'campaigns.id',
      request,
      (row: Selectable<CampaignTable>) => row,
    );
    return { rows: await withPlacements(ctx, page.rows), total: page.total };
  }
  const direction = sort.descending ? 'desc' : 'asc';
  const filtered = campaignsWhere(ctx, filter);
  let rows;
  if (sort.by === 'impressions' || sort.by === 'clicks') {
    const column = sort.by === 'impressions' ? 'd.impressions' : 'd.clicks';
    rows = filtered
      .leftJoin('campaign_delivery as d', 'd.campaign_id', 'campaigns.id')
      .selectAll('campaigns')
      .orderBy((eb) => eb.fn.coalesce(column, eb.lit(0)), direction);
  } else {
    rows = filtered
      .selectAll('campaigns')
      .orderBy(sort.by === 'name' ? 'campaigns.title' : 'campaigns.id', direction);
  }
  const [found, counted] = await Promise.all([
    rows.orderBy('campaigns.id', direction).limit(request.size).offset(request.offset).execute(),
    filtered.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: await withPlacements(ctx, found), total: Number(counted.total) };
}

/**
 * Joins placements to campaign rows sorted by id, with one query: by id list for a few rows (which
 * may be far apart), by id range for a page of many.
 */
async function withPlacements(ctx: StoreContext, rows: Selectable<CampaignTable>[]): Promise<Campaign[]> {
  if (rows.length === 0) return [];
  const first = (rows[0] as { id: number }).id;
  const last = (rows[rows.length - 1] as { id: number }).id;
  let query = ctx.db.selectFrom('campaign_placements').select(['campaign_id', 'placement_id']);
  query =
    rows.length <= 500
      ? query.where(
          'campaign_id',
          'in',
          rows.map((row) => row.id),
        )
      : query.where('campaign_id', '>=', first).where('campaign_id', '<=', last);
  const links = await query.orderBy('placement_id').execute();
  const placementsByCampaign = new Map<number, string[]>();
  for (const link of links) {
    const list = placementsByCampaign.get(link.campaign_id);
    if (list) list.push(link.placement_id);
    else placementsByCampaign.set(link.campaign_id, [link.placement_id]);
  }
  return rows.map((row) => toCampaign(row, placementsByCampaign.get(row.id) ?? []));
}

/** A `campaign_prices` row: `price` (null for none) in force from `since`, set by `actor`. */
function priceRow(campaignId: number, price: Price | null, since: number, actor: string) {
  return {
    campaign_id: campaignId,
    since,
    model: price?.model ?? null,
    amount_micros: price?.amountMicros ?? null,
    actor,
  };
}

/**
 * Applies a validated patch; returns the updated campaign, or undefined when it does not exist. A
 * patch whose price differs from the one in force appends it to `campaign_prices` (set by `actor`)
 * in the same transaction, compared once the update holds the campaign's row, which a batch's commit
 * locks before reading the newest price: the two always agree.
 */
export async function updateCampaign(
  ctx: StoreContext,
  id: number,
  patch: CampaignPatch,
  now = Date.now(),
  actor = 'system',
): Promise<Campaign | undefined> {
  return transact(ctx, async (tx) => {
    const result = await tx.db
      .updateTable('campaigns')
      .set({
        ...campaignColumns(patch),
        ...(patch.rejectionReason !== undefined && { rejection_reason: patch.rejectionReason }),
        ...(patch.cappedUntil !== undefined && { capped_until: patch.cappedUntil }),
        updated_at: now,
      })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    if (patch.price !== undefined) {
      const inForce = await newestPriceRow(tx, id);
      const current = inForce === undefined ? null : priceOf(inForce.model, inForce.amount_micros);
      if (!samePrice(current, patch.price))
        await tx.db
          .insertInto('campaign_prices')
          .values(priceRow(id, patch.price, now, actor))
          .execute();
    }
    if (patch.placements !== undefined) {
      await tx.db.deleteFrom('campaign_placements').where('campaign_id', '=', id).execute();
      await tx.db
        .insertInto('campaign_placements')
        .values(patch.placements.map((placement_id) => ({ campaign_id: id, placement_id })))
        .execute();
    }
    if (patch.budget !== undefined || patch.timeZone !== undefined) await fillSpendCounters(tx, id, now);
    return getCampaign(tx, id);
  });
}

function newestPriceRow(ctx: StoreContext, campaignId: number) {
  return ctx.db
    .selectFrom('campaign_prices')
    .select(['model', 'amount_micros'])
    .where('campaign_id', '=', campaignId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Every price a campaign has had, newest (the one in force) first, with what was billed at each. */
export async function campaignPrices(ctx: StoreContext, campaignId: number): Promise<CampaignPriceRecord[]> {
  const rows = await ctx.db
    .selectFrom('campaign_prices_live')
    .select(['since', 'model', 'amount_micros', 'actor', 'billed', 'spend_micros'])
    .where('campaign_id', '=', campaignId)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({
    since: Number(row.since),
    price: priceOf(row.model, row.amount_micros),
    setBy: row.actor,
    billedUnits: Number(row.billed),
    spendMicros: micros(row.spend_micros),
  }));
}
