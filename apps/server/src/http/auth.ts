import { bearerToken, digestApiKey, isWellFormedAdminToken, isWellFormedApiKey } from '../domain/api-keys.js';
import { PARTNER_ROUTE_HINT, partnerKeyRefusal } from '../domain/credentials.js';
import { DomainError, WrongCredential } from '../domain/errors.js';
import type { Caller } from '../serving/delivery.js';
import type { ServingState } from '../serving/serving-state.js';

const unauthorized = (): DomainError => new DomainError('unauthorized', 'unauthorized');

/** The 403 of a suspended key; partner bodies carry no code, so the SDK tells this case by it. */
export const SUSPENDED_KEY_MESSAGE = 'api key suspended';

/** Digests of tokens that authenticated before: skips re-hashing on every request of a known key. */
const MAX_REMEMBERED = 10_000;

/**
 * Authenticates a partner from its `Authorization: Bearer <key>` header (D6) against the in-memory
 * key registry. A malformed key is refused before any look-up; no branch touches the store.
 * Revocation and suspension are read from the registry on every call, never from the memo.
 */
export function partnerAuthenticator(
  state: ServingState,
  /** Told of every successful use, for "last used" in key listings. */
  onUse: (apiKeyId: number, at: number) => void = () => undefined,
  clock: () => number = Date.now,
): (header: string | undefined) => Caller {
  const remembered = new Map<string, string>();
  return (header) => {
    const token = bearerToken(header);
    if (token === undefined) throw unauthorized();
    let digest = remembered.get(token);
    if (digest === undefined) {
      if (!isWellFormedApiKey(token)) {
        // Contract 5.4 keeps the body bare; only the header says which credential this route takes.
        if (isWellFormedAdminToken(token)) throw new WrongCredential(PARTNER_ROUTE_HINT, 'unauthorized');
        throw unauthorized();
      }
      digest = digestApiKey(token);
    }
    const key = state.key(digest);
    const now = clock();
    // A rotated key keeps working until its expiry, then is as unknown as a revoked one.
    const refusal = partnerKeyRefusal(key, now);
    if (refusal === 'unknown' || !key) throw unauthorized();
    if (refusal === 'suspended') throw new DomainError('forbidden', SUSPENDED_KEY_MESSAGE);
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(token, digest);
    onUse(key.id, now);
    return {
      partnerId: key.partnerId,
      apiKeyId: key.id,
      blockedCategories: key.blockedCategories,
      blockedAdvertisers: key.blockedAdvertisers,
      policies: key.policies,
    };
  };
}
