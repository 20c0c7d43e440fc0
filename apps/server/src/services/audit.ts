import type { Store } from '../store/store.js';

/**
 * Who made a change, as written to the audit log: `admin:<token id>` for the management API,
 * `cli` for the command line, `system` for the clock and caps. `scope` is reserved for tokens
 * limited to one advertiser or partner; today every actor is an operator who sees everything.
 */
export interface Actor {
  id: string;
  scope: 'operator';
}

export const CLI_ACTOR: Actor = { id: 'cli', scope: 'operator' };
export const SYSTEM_ACTOR: Actor = { id: 'system', scope: 'operator' };

export interface Change {
  objectType: 'partner' | 'api_key' | 'advertiser' | 'campaign' | 'placement' | 'admin_token';
  objectId: string | number;
  action: string;
  before: unknown;
  after: unknown;
  reason?: string | null;
}

/** Appends one audit entry; call it with the transaction-bound store that made the change. */
export function audit(store: Store, actor: Actor, change: Change, at: number): Promise<void> {
  return store.appendAudit({
    at,
    actor: actor.id,
    objectType: change.objectType,
    objectId: String(change.objectId),
    action: change.action,
    reason: change.reason ?? null,
    before: change.before,
    after: change.after,
  });
}
