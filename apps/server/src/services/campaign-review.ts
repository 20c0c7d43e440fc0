import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';
import { APPROVED_ON_IMPORT, CampaignService, campaignToJson, EDITABLE } from './campaigns.js';
import { requireOperatorAccount } from './scope.js';

/** One field that differs from the version the operator last approved. */
export interface FieldChange {
  field: (typeof EDITABLE)[number];
  approved: unknown;
  now: unknown;
}

/** Audit entries read per page while looking back for the last approval. */
const AUDIT_PAGE = 100;

/**
 * What changed in a campaign since the operator last approved it, so a reviewer sees the edit and
 * not the whole campaign again (D14): the approval's audit entry holds the approved version. Null
 * for a campaign never approved (its first review). For the operator's people only, like the
 * audit log it reads.
 */
export async function changesSinceApproval(
  store: Store,
  actor: Actor,
  id: number,
): Promise<FieldChange[] | null> {
  requireOperatorAccount(actor, 'compare a campaign with its approved version');
  const current = campaignToJson(await new CampaignService(store, actor).get(id));
  let after: number | undefined;
  for (;;) {
    const entries = await store.listAudit(
      { objectType: 'campaign', objectId: String(id) },
      { newestFirst: true, limit: AUDIT_PAGE, ...(after !== undefined && { after }) },
    );
    const approval = entries.find(
      (entry) =>
        entry.action === 'approve' || (entry.action === 'import' && entry.reason === APPROVED_ON_IMPORT),
    );
    if (approval) {
      const approved = (approval.after ?? {}) as Record<string, unknown>;
      // A field the approved version lacks (price, before campaigns had one) was null then.
      return EDITABLE.filter(
        (field) => JSON.stringify(approved[field] ?? null) !== JSON.stringify(current[field] ?? null),
      ).map((field) => ({ field, approved: approved[field] ?? null, now: current[field] ?? null }));
    }
    if (entries.length < AUDIT_PAGE) return null;
    after = entries.at(-1)!.id;
  }
}
