import type { OperationClass } from '../domain/rate-limits.js';
import { BucketMap, monotonicNow, type BucketPolicy } from '../domain/token-bucket.js';

/** How the limiter is doing, for readiness and logs. */
export interface LimiterHealth {
  /** `memory`: per instance by design; `shared`: in Redis; `degraded`: Redis is gone, per instance for now. */
  mode: 'memory' | 'shared' | 'degraded';
  /** What anyone may read: names no host or port. */
  detail: string;
  /** The connection error behind `degraded`, which may name hosts: for the log and admins only. */
  cause?: string;
}

/**
 * Takes one token from the bucket of a key's operation class (D7). Answers 0 when the request may go on, otherwise the
 * whole seconds (at least 1) until a token is back. The memory limiter answers synchronously, so
 * the default hot path never waits on a promise; a shared one answers with a promise.
 */
export interface RateLimiter {
  take(operation: OperationClass, apiKeyId: number, policy: BucketPolicy): number | Promise<number>;
  health(): LimiterHealth;
  close(): Promise<void>;
}

/** The default: buckets in this process's memory, limits per instance. */
export class MemoryRateLimiter implements RateLimiter {
  // One map per class, keyed by the key's id: no string to build on the hot path.
  private readonly buckets: Record<OperationClass, BucketMap<number>> = {
    fetch: new BucketMap(),
    events: new BucketMap(),
  };

  /** `clock` only times refills: a monotonic one, so a wall clock stepped back refuses no one. */
  constructor(private readonly clock: () => number = monotonicNow) {}

  take(operation: OperationClass, apiKeyId: number, policy: BucketPolicy): number {
    return this.buckets[operation].take(apiKeyId, policy, this.clock());
  }

  health(): LimiterHealth {
    return { mode: 'memory', detail: 'in memory (limits per instance)' };
  }

  async close(): Promise<void> {}
}
