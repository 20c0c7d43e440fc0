// Admin tokens (only their digests are stored). Part of the Store façade (store.ts): functions over a
// StoreContext.
import { toAdminToken, type AdminTokenRecord, type PageRequest } from './rows.js';
import { page, type StoreContext } from './context.js';
import { findRow, insertRow, updateRow } from './table-rows.js';

/** Every column of an admin token but its digest, which never leaves the store. */
const ADMIN_TOKEN_COLUMNS = [
  'id',
  'label',
  'display_prefix',
  'scope',
  'role',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;

export async function createAdminToken(
  ctx: StoreContext,
  token: {
    digest: string;
    displayPrefix: string;
    label: string;
    expiresAt?: number | null;
    scope?: string;
    role?: string;
  },
  now = Date.now(),
): Promise<AdminTokenRecord> {
  const values = {
    digest: token.digest,
    display_prefix: token.displayPrefix,
    label: token.label,
    created_at: now,
    revoked_at: null,
    expires_at: token.expiresAt ?? null,
    scope: token.scope ?? 'operator',
    role: token.role ?? 'admin',
  };
  const row = await insertRow(ctx, 'admin_tokens', values, ADMIN_TOKEN_COLUMNS);
  return toAdminToken(row);
}

/** The token with this digest, revoked and expired ones included: the caller decides. */
export function findAdminToken(ctx: StoreContext, digest: string): Promise<AdminTokenRecord | undefined> {
  return findRow(ctx, 'admin_tokens', 'digest', digest, toAdminToken, ADMIN_TOKEN_COLUMNS);
}

export function getAdminToken(ctx: StoreContext, id: number): Promise<AdminTokenRecord | undefined> {
  return findRow(ctx, 'admin_tokens', 'id', id, toAdminToken, ADMIN_TOKEN_COLUMNS);
}

export async function listAdminTokens(
  ctx: StoreContext,
  request: PageRequest = { limit: 1_000_000 },
): Promise<AdminTokenRecord[]> {
  const query = ctx.db.selectFrom('admin_tokens').select(ADMIN_TOKEN_COLUMNS);
  return (await page(query, request, 'id').execute()).map(toAdminToken);
}

export async function updateAdminToken(
  ctx: StoreContext,
  id: number,
  changes: { revokedAt?: number; lastUsedAt?: number },
): Promise<void> {
  await updateRow(ctx, 'admin_tokens', id, {
    revoked_at: changes.revokedAt,
    last_used_at: changes.lastUsedAt,
  });
}

/**
 * Operator admin tokens that can authenticate at `now`, neither revoked nor expired: the ones that
 * can manage tokens, so the last of them must stay. With `lock` (inside a
 * transaction) those rows stay locked until it ends (`EngineTraits.lockRows`: PostgreSQL's
 * `FOR UPDATE`; SQLite runs one writer at a time anyway), so two revocations running at once
 * cannot each see the other's token as the one left.
 */
export async function countAdminTokens(
  ctx: StoreContext,
  now = Date.now(),
  options: { lock?: boolean } = {},
): Promise<number> {
  const query = ctx.db
    .selectFrom('admin_tokens')
    .select('id')
    .where('revoked_at', 'is', null)
    .where('scope', '=', 'operator')
    .where('role', '=', 'admin')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  return (await (options.lock ? ctx.traits.lockRows(query) : query).execute()).length;
}
