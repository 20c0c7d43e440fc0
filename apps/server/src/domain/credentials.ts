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
