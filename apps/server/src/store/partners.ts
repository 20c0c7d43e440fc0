// Partners, their API keys, and what the serving state loads of the keys (live keys with their
// limits). Part of the Store façade (store.ts): functions over a StoreContext.
import { keyPolicies } from '../domain/rate-limits.js';
import {
  toApiKey,
  toPartner,
  type ApiKeyRecord,
  type ApiKeyStatus,
  type Partner,
  type RateLimits,
  type NumberedPage,
  type NumberedPageRequest,
  type PageRequest,
  type LiveKey,
} from './rows.js';
import { numberedPage, page, type StoreContext } from './context.js';
import { insertRow, findRow, updateRow } from './table-rows.js';

export async function createPartner(ctx: StoreContext, name: string, now = Date.now()): Promise<Partner> {
  return toPartner(await insertRow(ctx, 'partners', { name, created_at: now, updated_at: now }));
}

export function findPartner(ctx: StoreContext, idOrName: number | string): Promise<Partner | undefined> {
  return findRow(ctx, 'partners', typeof idOrName === 'number' ? 'id' : 'name', idOrName, toPartner);
}

export async function listPartners(
  ctx: StoreContext,
  request: PageRequest = { limit: 1_000_000 },
): Promise<Partner[]> {
  return (await page(ctx.db.selectFrom('partners').selectAll(), request, 'id').execute()).map(toPartner);
}

/** One numbered page of the partners, newest first, and how many there are. */
export async function partnerPage(
  ctx: StoreContext,
  request: NumberedPageRequest,
): Promise<NumberedPage<Partner>> {
  return numberedPage(ctx.db.selectFrom('partners'), 'id', request, toPartner);
}

export async function updatePartner(
  ctx: StoreContext,
  id: number,
  changes: { name?: string; blockedCategories?: string[]; blockedAdvertisers?: number[] },
  now = Date.now(),
) {
  await updateRow(ctx, 'partners', id, {
    name: changes.name,
    blocked_categories:
      changes.blockedCategories === undefined ? undefined : JSON.stringify(changes.blockedCategories),
    blocked_advertisers:
      changes.blockedAdvertisers === undefined ? undefined : JSON.stringify(changes.blockedAdvertisers),
    updated_at: now,
  });
}

export async function createApiKey(
  ctx: StoreContext,
  key: { partnerId: number; label: string | null; displayPrefix: string; digest: string },
  now = Date.now(),
): Promise<ApiKeyRecord> {
  const row = await insertRow(ctx, 'api_keys', {
    partner_id: key.partnerId,
    label: key.label,
    display_prefix: key.displayPrefix,
    digest: key.digest,
    status: 'active',
    created_at: now,
    revoked_at: null,
  });
  return toApiKey(row);
}

function keysWithUsage(ctx: StoreContext) {
  return ctx.db
    .selectFrom('api_keys')
    .leftJoin('api_key_usage', 'api_key_usage.api_key_id', 'api_keys.id')
    .selectAll('api_keys')
    .select([
      'api_key_usage.last_used_at',
      'api_key_usage.browser_requests',
      'api_key_usage.last_browser_request_at',
    ]);
}

export async function getApiKey(ctx: StoreContext, id: number): Promise<ApiKeyRecord | undefined> {
  const row = await keysWithUsage(ctx).where('api_keys.id', '=', id).executeTakeFirst();
  return row && toApiKey(row);
}

export async function listApiKeys(
  ctx: StoreContext,
  partnerId?: number,
  request: PageRequest = { limit: 1_000_000 },
): Promise<ApiKeyRecord[]> {
  let query = keysWithUsage(ctx);
  if (partnerId !== undefined) query = query.where('api_keys.partner_id', '=', partnerId);
  return (await page(query, request, 'api_keys.id').execute()).map(toApiKey);
}

/** One numbered page of the keys (of one partner, when given), newest first, with their usage and count. */
export async function apiKeyPage(
  ctx: StoreContext,
  partnerId: number | undefined,
  request: NumberedPageRequest,
): Promise<NumberedPage<ApiKeyRecord>> {
  let query = keysWithUsage(ctx);
  if (partnerId !== undefined) query = query.where('api_keys.partner_id', '=', partnerId);
  // A key has at most one usage row, so the join does not change the count.
  return numberedPage(query, 'api_keys.id', request, toApiKey, { selected: true });
}

/** Changes a key's lifecycle columns; returns it, or undefined when no such key exists. */
export async function updateApiKey(
  ctx: StoreContext,
  id: number,
  changes: {
    status?: ApiKeyStatus;
    revokedAt?: number | null;
    expiresAt?: number | null;
    suspendedReason?: string | null;
    suspendedAt?: number | null;
    label?: string | null;
    rateLimits?: RateLimits;
  },
): Promise<ApiKeyRecord | undefined> {
  await ctx.db
    .updateTable('api_keys')
    .set({
      ...(changes.status !== undefined && { status: changes.status }),
      ...(changes.revokedAt !== undefined && { revoked_at: changes.revokedAt }),
      ...(changes.expiresAt !== undefined && { expires_at: changes.expiresAt }),
      ...(changes.suspendedReason !== undefined && { suspended_reason: changes.suspendedReason }),
      ...(changes.suspendedAt !== undefined && { suspended_at: changes.suspendedAt }),
      ...(changes.label !== undefined && { label: changes.label }),
      ...(changes.rateLimits !== undefined && {
        fetch_rate: changes.rateLimits.fetchRate,
        fetch_burst: changes.rateLimits.fetchBurst,
        events_rate: changes.rateLimits.eventsRate,
        events_burst: changes.rateLimits.eventsBurst,
      }),
    })
    .where('id', '=', id)
    .execute();
  return getApiKey(ctx, id);
}

/** Marks a key revoked; returns it, or undefined when no such key exists. */
export async function revokeApiKey(
  ctx: StoreContext,
  id: number,
  now = Date.now(),
): Promise<ApiKeyRecord | undefined> {
  return updateApiKey(ctx, id, { status: 'revoked', revokedAt: now });
}

/** Keys that can authenticate (active or suspended), with their partner's blocked categories and advertisers. */
export async function loadLiveKeys(ctx: StoreContext): Promise<LiveKey[]> {
  const rows = await ctx.db
    .selectFrom('api_keys')
    .innerJoin('partners', 'partners.id', 'api_keys.partner_id')
    .select([
      'api_keys.id',
      'api_keys.partner_id',
      'api_keys.digest',
      'api_keys.status',
      'api_keys.expires_at',
      'api_keys.fetch_rate',
      'api_keys.fetch_burst',
      'api_keys.events_rate',
      'api_keys.events_burst',
      'partners.blocked_categories',
      'partners.blocked_advertisers',
    ])
    .where('api_keys.status', '!=', 'revoked')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    partnerId: row.partner_id,
    digest: row.digest,
    status: row.status as LiveKey['status'],
    expiresAt: row.expires_at,
    blockedCategories: JSON.parse(row.blocked_categories) as string[],
    blockedAdvertisers: JSON.parse(row.blocked_advertisers) as number[],
    policies: keyPolicies({
      fetchRate: row.fetch_rate,
      fetchBurst: row.fetch_burst,
      eventsRate: row.events_rate,
      eventsBurst: row.events_burst,
    }),
  }));
}

/**
 * Records when keys were last used and their refused browser requests (batched by the caller;
 * not a watched table, so it never triggers an index reload).
 */
export async function recordKeyUsage(
  ctx: StoreContext,
  lastUsed: ReadonlyMap<number, number>,
  browserUses: ReadonlyMap<number, { count: number; at: number }> = new Map(),
): Promise<void> {
  for (const [apiKeyId, at] of lastUsed) {
    const browser = browserUses.get(apiKeyId);
    await ctx.db
      .insertInto('api_key_usage')
      .values({
        api_key_id: apiKeyId,
        last_used_at: at,
        browser_requests: browser?.count ?? 0,
        last_browser_request_at: browser?.at ?? null,
      })
      .onConflict((oc) =>
        oc.column('api_key_id').doUpdateSet((eb) => ({
          last_used_at: at,
          browser_requests: eb('api_key_usage.browser_requests', '+', browser?.count ?? 0),
          last_browser_request_at: eb.fn.coalesce(
            eb.ref('excluded.last_browser_request_at'),
            eb.ref('api_key_usage.last_browser_request_at'),
          ),
        })),
      )
      .execute();
  }
}
