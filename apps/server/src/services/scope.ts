// Scope (D13), enforced here, in the services, for every caller: a dashboard page, the management
// API and the CLI all pass through the same checks.
import { canSee, mayChange, type Account } from '../domain/accounts.js';
import { DomainError, invalidField, notFound } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';

/** Whether the actor may see an object owned by this advertiser or partner. */
export const sees = (actor: Actor, owner: { kind: 'advertiser' | 'partner'; id: number }): boolean =>
  canSee(actor.account, owner);

/** Refuses a change from a read-only role. */
export function requireChange(actor: Actor): void {
  if (!mayChange(actor.role)) {
    throw new DomainError('forbidden', `your role (${actor.role}) may read but not change anything`);
  }
}

/** Refuses what only the operator's people may read. */
export function requireOperatorAccount(actor: Actor, what: string): void {
  if (actor.account.kind !== 'operator') throw new DomainError('forbidden', `only the operator may ${what}`);
}

/** Refuses what only the operator's people may change (after the object was found visible). */
export function requireOperator(actor: Actor, what: string): void {
  requireOperatorAccount(actor, what);
  requireChange(actor);
}

/** Whether the actor may see an account itself (the operator's only by the operator's people). */
export const seesAccount = (actor: Actor, account: Account): boolean =>
  account.kind === 'operator' ? actor.account.kind === 'operator' : canSee(actor.account, account);

/** `operator`, `advertiser:<id or name>` or `partner:<id or name>`, as the CLI and the API take it. */
export function parseAccountRef(value: unknown): { kind: Account['kind']; ref?: string } {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === 'operator') return { kind: 'operator' };
  const match = /^(advertiser|partner):(.+)$/.exec(text);
  if (!match) {
    throw invalidField('account', 'must be operator, advertiser:<id or name> or partner:<id or name>');
  }
  return { kind: match[1] as 'advertiser' | 'partner', ref: match[2]! };
}

/** The account a reference names, checked to exist; one the actor may not see reads as missing. */
export async function resolveAccount(store: Store, actor: Actor, value: unknown): Promise<Account> {
  const { kind, ref } = parseAccountRef(value);
  if (kind === 'operator' || ref === undefined) return { kind: 'operator' };
  const key = /^\d+$/.test(ref) ? Number(ref) : ref;
  const found = kind === 'advertiser' ? await store.findAdvertiser(key) : await store.findPartner(key);
  const account: Account = { kind, id: found?.id ?? 0 };
  // Another account's advertiser or partner reads exactly like a missing one (D13).
  if (!found || !seesAccount(actor, account)) throw notFound(`${kind} ${JSON.stringify(ref)} not found`);
  return account;
}

/** An account as stored with an admin token (`operator`, `advertiser:<id>`, `partner:<id>`). */
export function storedAccount(scope: string): Account {
  const match = /^(advertiser|partner):(\d+)$/.exec(scope);
  return match ? { kind: match[1] as 'advertiser' | 'partner', id: Number(match[2]) } : { kind: 'operator' };
}
