import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { addressSource } from '../domain/end-user.js';
import { DomainError } from '../domain/errors.js';
import type { Actor } from '../services/audit.js';
import type { AdminTokens } from '../services/admin-tokens.js';
import { HttpError } from './errors.js';
import { BucketMap, monotonicNow, type BucketPolicy } from '../domain/token-bucket.js';
import { peerAddress, type ClientAddress } from './client-address.js';

/** Failed authentications one client may make: a burst of 20, then 5 per second (D6). */
export const AUTH_FAILURE_POLICY: BucketPolicy = { perSecond: 5, burst: 20 };

/**
 * Failed authentications the whole instance takes from all clients together: what bounds a guesser
 * who spreads its attempts over many addresses. Only failures draw from it, so partners with a
 * valid key are never slowed; a client already over its own limit does not draw from it either,
 * so one noisy client cannot make everyone else's typo a 429.
 */
export const INSTANCE_AUTH_FAILURE_POLICY: BucketPolicy = { perSecond: 100, burst: 500 };

/** Addresses tracked at most; past it the oldest entries go (a flood of addresses cannot grow memory). */
const MAX_ADDRESSES = 100_000;

/**
 * Whose failure this is: an IPv4 address itself, and for IPv6 its /64, the block one subscriber
 * or one machine gets, so that walking the 2^64 addresses of a block counts as one client. An
 * IPv4 address in IPv6 form (`::ffff:192.0.2.1`, as a dual-stack socket reports it) is IPv4.
 */
export const failureSource = addressSource;

/**
 * Limits repeated failed authentications (D6), on both APIs: per client (see `failureSource`) and
 * for the instance as a whole. Only failures draw from the buckets, so a partner's valid key is
 * never slowed by them and never loses quota to them. The client is the one behind the trusted
 * proxies (`clientAddress`), so behind a load balancer one guesser does not lock out every client.
 */
export class AuthFailureLimiter {
  private readonly buckets = new BucketMap(MAX_ADDRESSES);
  /** Apart from the clients' map, whose oldest entries are dropped when it is full. */
  private readonly instance = new BucketMap(1);

  constructor(
    private readonly policy: BucketPolicy = AUTH_FAILURE_POLICY,
    /** Times refills: monotonic, so a wall clock stepped back turns no 401 into a 429. */
    private readonly clock: () => number = monotonicNow,
    private readonly instancePolicy: BucketPolicy = INSTANCE_AUTH_FAILURE_POLICY,
    private readonly clientAddress: ClientAddress = peerAddress,
  ) {}

  /** Records a failure from the client behind `request` (see `fail`). */
  failFrom(request: IncomingMessage): number {
    return this.fail(this.clientAddress(request));
  }

  /** Records a failure from `address`; returns 0 to answer 401, or the seconds for a 429's Retry-After. */
  fail(address: string): number {
    const now = this.clock();
    const own = this.buckets.take(failureSource(address), this.policy, now);
    if (own > 0) return own;
    return this.instance.take('all', this.instancePolicy, now);
  }
}

/**
 * Whether a failed authentication counts against its client: a credential was presented and was
 * wrong. A request with none at all guesses nothing (a health checker, a browser opening a link).
 */
export function isGuess(error: unknown, authorization: string | undefined): boolean {
  return error instanceof DomainError && error.kind === 'unauthorized' && authorization !== undefined;
}

/**
 * Authenticates an admin token; a failure is the usual 401 until its client has failed too often,
 * then a 429 with Retry-After, as on the partner API.
 */
export async function authenticateLimited(
  tokens: AdminTokens,
  failures: AuthFailureLimiter,
  request: FastifyRequest,
): Promise<Actor> {
  try {
    return await tokens.authenticate(request.headers.authorization);
  } catch (error) {
    if (isGuess(error, request.headers.authorization)) {
      const retryAfter = failures.failFrom(request.raw);
      if (retryAfter > 0)
        throw new HttpError(429, 'Rate limit exceeded', { 'retry-after': String(retryAfter) });
    }
    throw error;
  }
}
