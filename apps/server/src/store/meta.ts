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
