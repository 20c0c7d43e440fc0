/**
 * The lifecycle shared by partner API keys and admin tokens: a credential with an expiry stops
 * working at that instant (the instant itself included), exactly as a revoked one does.
 */
export function isExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && expiresAt <= now;
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
