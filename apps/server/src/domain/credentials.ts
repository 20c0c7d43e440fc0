/**
 * The lifecycle shared by partner API keys and admin tokens: a credential with an expiry stops
 * working at that instant (the instant itself included), exactly as a revoked one does.
 */
export function isExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && expiresAt <= now;
}

/**
 * Why the partner API refuses a live key found by its digest, or null when it takes it: `unknown`
 * (none found, or past its expiry: a rotated key ends as a revoked one does, 401) or `suspended`
 * (403). The one rule, read by the partner API's authentication and by the demo's start banner.
 */
export function partnerKeyRefusal(
  key: { status: string; expiresAt: number | null } | undefined,
  now: number,
): 'unknown' | 'suspended' | null {
  if (!key || isExpired(key.expiresAt, now)) return 'unknown';
  return key.status === 'suspended' ? 'suspended' : null;
}

/** What an operator sees of a credential that is not suspended: revocation wins over expiry. */
export function lifecycleStatus(
  revoked: boolean,
  expiresAt: number | null,
  now: number,
): 'active' | 'expired' | 'revoked' {
  if (revoked) return 'revoked';
  return isExpired(expiresAt, now) ? 'expired' : 'active';
}

// What a caller who sent the wrong kind of credential is told. Plain ASCII: it also goes into the
// `WWW-Authenticate` header, where RFC 6750 allows nothing else.
export const PARTNER_ROUTE_HINT = 'this route takes a partner API key (plc_...), not an admin token';
export const ADMIN_ROUTE_HINT = 'this route takes an admin token (pla_...), not a partner API key';
