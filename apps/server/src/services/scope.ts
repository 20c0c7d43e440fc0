// Scope (D13), enforced here, in the services, for every caller: a dashboard page, the management
// API and the CLI all pass through the same checks.
import { canSee, mayChange } from '../domain/accounts.js';
import { DomainError } from '../domain/errors.js';
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

/** Refuses what only the operator's people may do (after the object was found visible). */
export function requireOperator(actor: Actor, what: string): void {
  if (actor.account.kind !== 'operator') throw new DomainError('forbidden', `only the operator may ${what}`);
  requireChange(actor);
}
