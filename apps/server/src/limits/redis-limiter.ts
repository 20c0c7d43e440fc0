import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { createClient } from 'redis';
import { DEFAULT_REDIS_KEY_PREFIX } from '../config.js';
import type { OperationClass } from '../domain/rate-limits.js';
import { monotonicNow, type BucketPolicy } from '../domain/token-bucket.js';
import { MemoryRateLimiter, type LimiterHealth, type RateLimiter } from './rate-limiter.js';

/**
 * The token bucket of `domain/token-bucket.ts`, run atomically inside Redis so every instance draws
 * from the same bucket. Redis's own clock is used, so instances whose clocks disagree still agree
 * on the refill. Returns 0 when allowed, else the whole seconds until a token is back.
 */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.max(1, math.ceil((1 - tokens) / rate))
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return wait
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

/** A Redis answer slower than this counts as Redis being unavailable for that request. */
const COMMAND_TIMEOUT_MS = 250;
/** While degraded with a connection up, Redis is tried again at most this often. */
const PROBE_INTERVAL_MS = 1_000;
/** How long start-up waits for Redis before serving with per-instance limits. */
const CONNECT_WAIT_MS = 2_000;

/** The part of node-redis's client this limiter uses. */
interface Client {
  readonly isReady: boolean;
  readonly isOpen: boolean;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  sendCommand(args: string[]): Promise<unknown>;
  close(): Promise<unknown>;
}

/**
 * Limits shared by every instance through Redis (D7). If Redis cannot be reached, or answers too
 * slowly, requests are limited by this instance's own buckets instead (so the service keeps
 * serving, each instance allowing the full limit), the change is logged once and readiness says
 * so; the shared limits come back by themselves when Redis answers again.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly fallback: MemoryRateLimiter;
  /** When Redis went away, on the wall clock: only shown, never subtracted. */
  private degradedSince: number | null = null;
  private reason = 'not connected yet';
  private lastProbe = 0;
  private closed = false;

  private constructor(
    private readonly client: Client,
    private readonly logger: Logger,
    /** Times the fallback buckets and the probes: monotonic, like every limit. */
    private readonly clock: () => number,
    /** Every key this deployment writes starts with this, so deployments sharing one Redis never share state. */
    readonly keyPrefix: string,
  ) {
    this.fallback = new MemoryRateLimiter(clock);
    client.on('error', (error: Error) => this.degrade(error.message));
    client.on('ready', () => this.recover());
  }

  /** Connects (waiting at most two seconds) and returns the limiter, connected or degraded. */
  static async connect(
    url: string,
    logger: Logger,
    clock: () => number = monotonicNow,
    keyPrefix = DEFAULT_REDIS_KEY_PREFIX,
  ): Promise<RedisRateLimiter> {
    const client = createClient({
      url,
      // Commands never queue while disconnected: they fail at once and the request is limited locally.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: CONNECT_WAIT_MS,
        reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2_000),
      },
    });
    const limiter = new RedisRateLimiter(client, logger, clock, keyPrefix);
    limiter.degradedSince = Date.now();
    const connected = client.connect().then(
      () => true,
      () => false,
    );
    const waited = await Promise.race([
      connected,
      new Promise<false>((resolve) => setTimeout(resolve, CONNECT_WAIT_MS, false).unref()),
    ]);
    if (!waited) limiter.degrade(`no connection within ${CONNECT_WAIT_MS} ms`, true);
    return limiter;
  }

  take(operation: OperationClass, apiKeyId: number, policy: BucketPolicy): number | Promise<number> {
    const key = `${this.keyPrefix}ratelimit:${apiKeyId}:${operation}`;
    const shared = this.evaluate(TAKE_SCRIPT, TAKE_SHA, key, [
      String(policy.perSecond),
      String(policy.burst),
    ]);
    if (shared === undefined) return this.fallback.take(operation, apiKeyId, policy);
    return shared.then(Number, () => this.fallback.take(operation, apiKeyId, policy));
  }

  /**
   * Runs a Lua script on one key (or a few) in Redis, for this limiter and for other state every instance
   * must agree on (`click-credits.ts`). Undefined while Redis is unavailable, and a rejection when
   * it fails or answers too slowly: either way the caller falls back to its own memory, as the
   * limiter does, and the connection's health is tracked in one place.
   */
  evaluate(
    script: string,
    sha: string,
    key: string | string[],
    args: string[],
  ): Promise<unknown> | undefined {
    if (!this.client.isReady || (this.degradedSince !== null && !this.probeDue())) return undefined;
    const keys = typeof key === 'string' ? [key] : key;
    return this.runScript(script, sha, keys.length, [...keys, ...args]).then(
      (answer) => {
        if (this.degradedSince !== null) this.recover();
        return answer;
      },
      (error: unknown) => {
        this.degrade(error instanceof Error ? error.message : String(error));
        throw error;
      },
    );
  }

  health(): LimiterHealth {
    if (this.degradedSince === null) return { mode: 'shared', detail: 'shared in Redis' };
    const since = new Date(this.degradedSince).toISOString();
    return {
      mode: 'degraded',
      detail: `redis unavailable since ${since}: limits are per instance`,
      cause: this.reason,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.client.isOpen) await this.client.close();
  }

  private probeDue(): boolean {
    const now = this.clock();
    if (now - this.lastProbe < PROBE_INTERVAL_MS) return false;
    this.lastProbe = now;
    return true;
  }

  private async runScript(script: string, sha: string, keyCount: number, args: string[]): Promise<unknown> {
    const run = async (): Promise<unknown> => {
      try {
        return await this.client.sendCommand(['EVALSHA', sha, String(keyCount), ...args]);
      } catch (error) {
        // A restarted Redis has forgotten the script: load it by running it in full once.
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await this.client.sendCommand(['EVAL', script, String(keyCount), ...args]);
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${COMMAND_TIMEOUT_MS} ms`)),
        COMMAND_TIMEOUT_MS,
      );
    });
    try {
      return await Promise.race([run(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private degrade(reason: string, force = false): void {
    if (this.closed) return;
    this.reason = reason;
    if (this.degradedSince !== null && !force) return;
    this.degradedSince ??= Date.now();
    this.logger.warn(
      { rateLimiter: 'degraded', reason },
      'redis is unavailable: rate limits are per instance until it is back',
    );
  }

  private recover(): void {
    if (this.degradedSince === null || this.closed) return;
    const wasConnecting = this.reason === 'not connected yet';
    this.degradedSince = null;
    this.reason = '';
    if (wasConnecting) this.logger.info({ rateLimiter: 'shared' }, 'rate limits are shared in redis');
    else this.logger.info({ rateLimiter: 'shared' }, 'redis is back: rate limits are shared again');
  }
}
