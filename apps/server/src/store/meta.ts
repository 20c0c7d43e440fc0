// The change feed the serving state polls, and the store's own settings (`meta`). Part of the Store
// façade (store.ts): functions over a StoreContext.
import type { StoreContext } from './context.js';

/** Current version of each watched topic; a higher number means its tables changed. */
export async function changeVersions(ctx: StoreContext): Promise<Record<string, number>> {
  const rows = await ctx.db.selectFrom('change_versions').select(['topic', 'version']).execute();
  return Object.fromEntries(rows.map((row) => [row.topic, Number(row.version)]));
}

export async function getMeta(ctx: StoreContext, key: string): Promise<string | undefined> {
  const row = await ctx.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setMeta(ctx: StoreContext, key: string, value: string): Promise<void> {
  await ctx.db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * Sets `key` to `value` unless it has a value already, and returns the value it has: the first
 * writer wins, so instances starting together agree on one (the serve token secret, D15).
 */
export async function claimMeta(ctx: StoreContext, key: string, value: string): Promise<string> {
  await ctx.db
    .insertInto('meta')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return (await getMeta(ctx, key)) ?? value;
}

/**
 * The campaigns changed after version `after` up to version `upTo` of the `campaigns` topic, from
 * the log migration 011 keeps, in version order (a campaign may repeat); or null when a version in
 * between has no log row (a placement changed, a truncate, rows pruned), which calls for a full
 * reload.
 */
export async function campaignChangesBetween(
  ctx: StoreContext,
  after: number,
  upTo: number,
): Promise<number[] | null> {
  if (upTo < after) return null;
  const rows = await ctx.db
    .selectFrom('campaign_changes')
    .select(['version', 'campaign_id'])
    .where('version', '>', after)
    .where('version', '<=', upTo)
    .orderBy('version')
    .execute();
  return rows.length === upTo - after ? rows.map((row) => Number(row.campaign_id)) : null;
}

/** Log rows kept behind the newest: an instance further behind than this reloads in full. */
export const CAMPAIGN_CHANGES_KEPT = 100_000;

/** Drops log rows more than {@link CAMPAIGN_CHANGES_KEPT} versions old; returns how many. */
export async function pruneCampaignChanges(ctx: StoreContext): Promise<number> {
  const versions = await changeVersions(ctx);
  const result = await ctx.db
    .deleteFrom('campaign_changes')
    .where('version', '<=', (versions['campaigns'] ?? 0) - CAMPAIGN_CHANGES_KEPT)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
