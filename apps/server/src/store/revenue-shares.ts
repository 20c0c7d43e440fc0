// Partners' revenue shares (D18): each a number of basis points from an instant on. Rows are only
// added: the commit of each event reads the one in force when the event happened (charges.ts), so
// a row changed or removed would make earnings disagree with the share that gave them.
import type { StoreContext } from './context.js';
import { insertRow } from './table-rows.js';

export interface RevenueShare {
  id: number;
  partnerId: number;
  /** Epoch ms the share is in force from, until a share with a later start begins. */
  effectiveFrom: number;
  basisPoints: number;
  /** Who set it, as the audit log names actors (`admin:3`, `user:7`, `cli`). */
  actor: string;
  createdAt: number;
}

function toRevenueShare(row: {
  id: number | string;
  partner_id: number | string;
  effective_from: number | string;
  basis_points: number | string;
  actor: string;
  created_at: number | string;
}): RevenueShare {
  return {
    id: Number(row.id),
    partnerId: Number(row.partner_id),
    effectiveFrom: Number(row.effective_from),
    basisPoints: Number(row.basis_points),
    actor: row.actor,
    createdAt: Number(row.created_at),
  };
}

/** Adds a share of a partner from `effectiveFrom` on. */
export async function addRevenueShare(
  ctx: StoreContext,
  share: { partnerId: number; effectiveFrom: number; basisPoints: number; actor: string },
  now = Date.now(),
): Promise<RevenueShare> {
  const row = await insertRow(ctx, 'partner_revenue_shares', {
    partner_id: share.partnerId,
    effective_from: share.effectiveFrom,
    basis_points: share.basisPoints,
    actor: share.actor,
    created_at: now,
  });
  return toRevenueShare(row);
}

/**
 * A partner's shares, the latest to take effect first; of two from the same instant, the one set
 * last first, as it is the one in force (the order the event commit reads them in).
 */
export async function listRevenueShares(ctx: StoreContext, partnerId: number): Promise<RevenueShare[]> {
  const rows = await ctx.db
    .selectFrom('partner_revenue_shares')
    .selectAll()
    .where('partner_id', '=', partnerId)
    .orderBy('effective_from', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toRevenueShare);
}
