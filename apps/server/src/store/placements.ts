// The placement registry (D1). Part of the Store façade (store.ts): functions over a StoreContext.
import type { NumberedPage, NumberedPageRequest, Placement } from './rows.js';
import { numberedPage, type StoreContext } from './context.js';
import { findRow } from './table-rows.js';

type PlacementRow = { id: string; description: string; enabled: number };
const toPlacement = (row: PlacementRow): Placement => ({
  id: row.id,
  description: row.description,
  enabled: row.enabled === 1,
});

export async function listPlacements(ctx: StoreContext): Promise<Placement[]> {
  const rows = await ctx.db.selectFrom('placements').selectAll().orderBy('id').execute();
  return rows.map(toPlacement);
}

/**
 * One numbered page of the placements (only the enabled ones, when asked), newest first, and how
 * many there are. Their ids are names, so "newest" is the time each was added, the id breaking
 * ties between placements added in the same millisecond.
 */
export async function placementPage(
  ctx: StoreContext,
  filter: { enabledOnly?: boolean },
  request: NumberedPageRequest,
): Promise<NumberedPage<Placement>> {
  let query = ctx.db.selectFrom('placements');
  if (filter.enabledOnly) query = query.where('enabled', '=', 1);
  return numberedPage(query, ['created_at', 'id'], request, toPlacement);
}

export function getPlacement(ctx: StoreContext, id: string): Promise<Placement | undefined> {
  return findRow(ctx, 'placements', 'id', id, toPlacement);
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
  const set = {
    ...(changes.description !== undefined && { description: changes.description }),
    ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
  };
  // A change of nothing (`PATCH` with `{}`) is no statement at all: `UPDATE … SET` with no column
  // is a syntax error on both engines.
  if (Object.keys(set).length === 0) return;
  await ctx.db.updateTable('placements').set(set).where('id', '=', id).execute();
}
