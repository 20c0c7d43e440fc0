import type { FastifyRequest } from 'fastify';
import { bearerToken, digestApiKey, isWellFormedApiKey } from '../domain/api-keys.js';
import { DomainError } from '../domain/errors.js';
import type { Caller } from '../services/delivery.js';
import type { ServingState } from '../services/serving-state.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated partner key; set by the partner auth hook. */
    caller: Caller | null;
  }
}

const unauthorized = (): DomainError => new DomainError('unauthorized', 'unauthorized');

/**
 * Authenticates a partner request from `Authorization: Bearer <key>` (D6) against the in-memory key
 * registry. A malformed key is refused before any look-up; no branch touches the store.
 */
export function partnerAuth(state: ServingState) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined || !isWellFormedApiKey(token)) throw unauthorized();
    const key = state.key(digestApiKey(token));
    if (!key) throw unauthorized();
    if (key.status === 'suspended') throw new DomainError('forbidden', 'api key suspended');
    request.caller = { partnerId: key.partnerId, apiKeyId: key.id };
  };
}
