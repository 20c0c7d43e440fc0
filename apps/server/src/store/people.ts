// People (D13): users, their one-time links and their sessions. Part of the Store façade
// (store.ts): functions over a StoreContext. Links and sessions are looked up by the digest of
// their secret; the secrets themselves are never stored.
import type { Account } from '../domain/accounts.js';
import { numberedPage, page, type StoreContext } from './context.js';
import { insertRow, findRow, updateRow } from './table-rows.js';
import {
  toSession,
  toUser,
  toUserLink,
  type LinkPurpose,
  type NumberedPage,
  type NumberedPageRequest,
  type PageRequest,
  type SessionRecord,
  type UserLinkRecord,
  type UserRecord,
} from './rows.js';

const accountColumns = (account: Account) => ({
  account_kind: account.kind,
  account_id: account.kind === 'operator' ? null : account.id,
});

export async function createUser(
  ctx: StoreContext,
  user: { email: string; account: Account; role: string },
  now = Date.now(),
): Promise<UserRecord> {
  const row = await insertRow(ctx, 'users', {
    email: user.email,
    ...accountColumns(user.account),
    role: user.role,
    created_at: now,
  });
  return toUser(row);
}

export function getUser(ctx: StoreContext, id: number): Promise<UserRecord | undefined> {
  return findRow(ctx, 'users', 'id', id, toUser);
}

/** The user with this (lower-case) e-mail address, with the password hash sign-in checks. */
export function findUserForSignIn(
  ctx: StoreContext,
  email: string,
): Promise<{ user: UserRecord; passwordHash: string | null } | undefined> {
  return findRow(ctx, 'users', 'email', email, (row) => ({
    user: toUser(row),
    passwordHash: row.password_hash,
  }));
}

/** Users, in one account when `account` is given. */
export async function listUsers(
  ctx: StoreContext,
  account?: Account,
  request: PageRequest = { limit: 1_000_000 },
): Promise<UserRecord[]> {
  return (await page(usersOf(ctx, account).selectAll(), request, 'id').execute()).map(toUser);
}

/** One numbered page of the users (of one account, when given), newest first, and how many there are. */
export async function userPage(
  ctx: StoreContext,
  account: Account | undefined,
  request: NumberedPageRequest,
): Promise<NumberedPage<UserRecord>> {
  return numberedPage(usersOf(ctx, account), 'id', request, toUser);
}

function usersOf(ctx: StoreContext, account: Account | undefined) {
  let query = ctx.db.selectFrom('users');
  if (account) {
    const columns = accountColumns(account);
    query = query.where('account_kind', '=', columns.account_kind);
    if (columns.account_id !== null) query = query.where('account_id', '=', columns.account_id);
  }
  return query;
}

export async function updateUser(
  ctx: StoreContext,
  id: number,
  changes: { passwordHash?: string; role?: string; disabledAt?: number | null },
  now = Date.now(),
): Promise<void> {
  await updateRow(ctx, 'users', id, {
    password_hash: changes.passwordHash,
    password_changed_at: changes.passwordHash === undefined ? undefined : now,
    role: changes.role,
    disabled_at: changes.disabledAt,
  });
}

/** Every column of a link but its digest, which never leaves the store. */
const LINK_COLUMNS = ['id', 'user_id', 'purpose', 'created_at', 'expires_at', 'used_at'] as const;

/** Stores a new link; earlier unused links of the user are void from now on (one valid link at a time). */
export async function createUserLink(
  ctx: StoreContext,
  link: { digest: string; userId: number; purpose: LinkPurpose; expiresAt: number },
  now = Date.now(),
): Promise<UserLinkRecord> {
  await ctx.db
    .updateTable('user_links')
    .set({ used_at: now })
    .where('user_id', '=', link.userId)
    .where('used_at', 'is', null)
    .execute();
  const values = {
    digest: link.digest,
    user_id: link.userId,
    purpose: link.purpose,
    created_at: now,
    expires_at: link.expiresAt,
  };
  const row = await insertRow(ctx, 'user_links', values, LINK_COLUMNS);
  return toUserLink(row);
}

/** The link with this digest, used and expired ones included: the caller decides. */
export function findUserLink(ctx: StoreContext, digest: string): Promise<UserLinkRecord | undefined> {
  return findRow(ctx, 'user_links', 'digest', digest, toUserLink, LINK_COLUMNS);
}

/** Marks the link used; false when it already was (two browsers racing for one link: one wins). */
export async function useUserLink(ctx: StoreContext, id: number, now = Date.now()): Promise<boolean> {
  const result = await ctx.db
    .updateTable('user_links')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function createSession(
  ctx: StoreContext,
  session: { digest: string; userId: number; expiresAt: number; userAgent: string | null },
  now = Date.now(),
): Promise<SessionRecord> {
  const values = {
    digest: session.digest,
    user_id: session.userId,
    created_at: now,
    last_seen_at: now,
    expires_at: session.expiresAt,
    user_agent: session.userAgent,
  };
  const row = await insertRow(ctx, 'sessions', values, SESSION_COLUMNS);
  return toSession(row);
}

const SESSION_COLUMNS = [
  'id',
  'user_id',
  'created_at',
  'last_seen_at',
  'expires_at',
  'ended_at',
  'user_agent',
] as const;

export function findSession(ctx: StoreContext, digest: string): Promise<SessionRecord | undefined> {
  return findRow(ctx, 'sessions', 'digest', digest, toSession, SESSION_COLUMNS);
}

/** A user's sessions that have not ended, newest first. */
export async function listSessions(ctx: StoreContext, userId: number): Promise<SessionRecord[]> {
  const rows = await ctx.db
    .selectFrom('sessions')
    .select(SESSION_COLUMNS)
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toSession);
}

export async function touchSession(ctx: StoreContext, id: number, now = Date.now()): Promise<void> {
  await ctx.db.updateTable('sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
}

/** Ends one session, or with `userId` every session of that user; returns how many ended. */
export async function endSessions(
  ctx: StoreContext,
  which: { id: number } | { userId: number },
  now = Date.now(),
): Promise<number> {
  let query = ctx.db.updateTable('sessions').set({ ended_at: now }).where('ended_at', 'is', null);
  query = 'id' in which ? query.where('id', '=', which.id) : query.where('user_id', '=', which.userId);
  return Number((await query.executeTakeFirst()).numUpdatedRows);
}
