// People, accounts and what each role may do (D13). Pure rules: the services enforce them.
import { invalidField } from './errors.js';

/** The three kinds of account a person can belong to. */
export type AccountKind = 'operator' | 'advertiser' | 'partner';
export const ACCOUNT_KINDS: readonly AccountKind[] = ['operator', 'advertiser', 'partner'];

/** `admin`: everything the account may do, its users included; `manager`: all but users; `reporter`: read only. */
export type Role = 'admin' | 'manager' | 'reporter';
export const ROLES: readonly Role[] = ['admin', 'manager', 'reporter'];

/** Which objects a caller may see: everything (the operator), or one advertiser's or partner's. */
export type Account =
  { kind: 'operator' } | { kind: 'advertiser'; id: number } | { kind: 'partner'; id: number };

export const OPERATOR_ACCOUNT: Account = { kind: 'operator' };

/** Whether an account may see an object that belongs to `owner` (an advertiser's or a partner's). */
export function canSee(account: Account, owner: { kind: 'advertiser' | 'partner'; id: number }): boolean {
  return account.kind === 'operator' || (account.kind === owner.kind && account.id === owner.id);
}

/** Whether the role may change objects (reporters only read). */
export const mayChange = (role: Role): boolean => role !== 'reporter';

/** Whether the role may manage the account's users. */
export const mayManageUsers = (role: Role): boolean => role === 'admin';

/** `operator`, `advertiser:<id>` or `partner:<id>`: how accounts are written in the CLI and the audit log. */
export function accountLabel(account: Account): string {
  return account.kind === 'operator' ? 'operator' : `${account.kind}:${account.id}`;
}

/** A trimmed, lower-cased e-mail address that looks deliverable, or a field error. */
export function checkEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw invalidField('email', 'must be an e-mail address such as name@example.com');
  }
  return email;
}

export function checkRole(value: unknown): Role {
  if (!ROLES.includes(value as Role)) throw invalidField('role', `must be one of ${ROLES.join(', ')}`);
  return value as Role;
}
