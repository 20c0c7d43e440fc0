// The placement registry (D1). Part of the Store façade (store.ts): functions over a StoreContext.
import type { Placement } from './rows.js';
import type { StoreContext } from './context.js';

export async function listPlacements(ctx: StoreContext): Promise<Placement[]> {
  const rows = await ctx.db.selectFrom('placements').selectAll().orderBy('id').execute();
  return rows.map((row) => ({ id: row.id, description: row.description, enabled: row.enabled === 1 }));
}

export async function getPlacement(ctx: StoreContext, id: string): Promise<Placement | undefined> {
  const row = await ctx.db.selectFrom('placements').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { id: row.id, description: row.description, enabled: row.enabled === 1 };
}

export async function addPlacement(ctx: StoreContext, placement: Placement, now = Date.now()): Promise<void> {
  await ctx.db
    .insertInto('placements')
    .values({
      id: placement.id,
      description: placement.description,
      enabled: placement.enabled ? 1 : 0,
      created_at: now,
    })
    .execute();
}

export async function updatePlacement(
  ctx: StoreContext,
  id: string,
  changes: { description?: string; enabled?: boolean },
): Promise<void> {
  await ctx.db
    .updateTable('placements')
    .set({
      ...(changes.description !== undefined && { description: changes.description }),
      ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
    })
    .where('id', '=', id)
    .execute();
}
