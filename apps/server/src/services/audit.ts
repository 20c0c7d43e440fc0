import { DomainError } from '../domain/errors.js';
import { OPERATOR_ACCOUNT, type Account, type Role } from '../domain/accounts.js';
import type { AuditRecord, NumberedPage, NumberedPageRequest, PageRequest, Store } from '../store/store.js';

/**
 * Who makes a request or a change: `id` is what the audit log names (`admin:<token id>` for the
 * management API, `user:<user id>` for a person signed in to the dashboard, `cli` for the command
 * line, `system` for the clock and caps); `account` and `role` are what it may see and do (D13).
 */
export interface Actor {
  id: string;
  account: Account;
  role: Role;
}

export const CLI_ACTOR: Actor = { id: 'cli', account: OPERATOR_ACCOUNT, role: 'admin' };
export const SYSTEM_ACTOR: Actor = { id: 'system', account: OPERATOR_ACCOUNT, role: 'admin' };

export interface Change {
  objectType:
    | 'partner'
    | 'api_key'
    | 'advertiser'
    | 'campaign'
    | 'placement'
    | 'admin_token'
    | 'user'
    | 'key_flag'
    | 'flag_policy'
    | 'statement'
    | 'webhook_endpoint';
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

const OPERATORS_ONLY = 'only the operator may read the audit log';

/** The audit log names every account's changes: only the operator's people read it. */
function requireAuditReader(actor: Actor): void {
  if (actor.account.kind !== 'operator') throw new DomainError('forbidden', OPERATORS_ONLY);
}

/** The audit log, for the operator's people only. */
export async function readAudit(
  store: Store,
  actor: Actor,
  filter: { objectType?: string; objectId?: string },
  request: PageRequest,
): Promise<AuditRecord[]> {
  requireAuditReader(actor);
  return store.listAudit(filter, request);
}

/** One numbered page of the audit log, newest first, for the operator's people only. */
export async function readAuditPage(
  store: Store,
  actor: Actor,
  request: NumberedPageRequest,
): Promise<NumberedPage<AuditRecord>> {
  requireAuditReader(actor);
  return store.auditPage({}, request);
}

/**
 * Who each audit actor is, in words, for the operator's people reading the log: a user's e-mail
 * address, an admin token's label, the command line or Placard itself. An actor no longer found
 * keeps its id.
 */
export async function auditActorNames(
  store: Store,
  actor: Actor,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (actor.account.kind !== 'operator') {
    throw new DomainError('forbidden', OPERATORS_ONLY);
  }
  const names = new Map<string, string>([
    ['cli', 'the command line'],
    ['system', 'Placard (automatic)'],
  ]);
  for (const id of new Set(ids)) {
    if (names.has(id)) continue;
    const [kind, number] = id.split(':');
    const user = kind === 'user' ? await store.getUser(Number(number)) : undefined;
    const token = kind === 'admin' ? await store.getAdminToken(Number(number)) : undefined;
    names.set(id, user?.email ?? (token ? `admin token “${token.label}”` : id));
  }
  return names;
}
