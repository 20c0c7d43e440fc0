import type { Micros } from './domain/money.js';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppDeps } from './http/app.js';
import { ReadinessMonitor } from './http/readiness.js';
import { clientAddressBehind } from './http/client-address.js';
import { Shutdown } from './http/shutdown.js';
import { DEFAULT_CURRENCY, DEFAULT_FETCH_MAX_AGE_SECONDS } from './config.js';
import type { EventSink } from './ingest/event-sink.js';
import { DEFAULT_GROUP_COMMIT, GroupCommitSink } from './ingest/group-commit.js';
import { AdminTokens } from './services/admin-tokens.js';
import { DeliveryService } from './serving/delivery.js';
import { TrafficJudge } from './serving/traffic-judge.js';
import { EventWrites } from './services/event-writes.js';
import { KeyFlagJob } from './jobs/key-flag-job.js';
import { KeyUsage } from './jobs/key-usage.js';
import { LifecycleJob } from './jobs/lifecycle-job.js';
import type { ClickCredits } from './limits/click-credits.js';
import type { ViewerFrequency } from './limits/viewer-frequency.js';
import { ViewerKeys } from './domain/viewer-keys.js';
import type { ServeTokenStates } from './limits/serve-token-states.js';
import { ServeTokens } from './domain/serve-tokens.js';
import { monotonicNow } from './domain/token-bucket.js';
import { MemoryRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { ManagementServices } from './services/management-services.js';
import { Metrics } from './services/metrics.js';
import { PacingJob } from './jobs/pacing-job.js';
import { RecentTraffic } from './serving/recent-traffic.js';
import { RetentionJob } from './jobs/retention-job.js';
import { RollupCompactionJob } from './jobs/rollup-compaction-job.js';
import { FoldJob } from './jobs/fold-job.js';
import { WebhookDeliveryJob } from './jobs/webhook-delivery-job.js';
import { ServingState } from './serving/serving-state.js';
import { Sessions } from './services/sessions.js';
import type { Store } from './store/store.js';
import { VERSION } from './version.js';

export interface WiringOptions {
  refreshIntervalMs: number;
  accessLog: boolean;
  /** Seconds partners may reuse a fetch answer (default 5). */
  fetchMaxAgeSeconds?: number;
  /** Days raw events are kept (rollups are kept for good). */
  eventRetentionDays: number;
  /** The one time source for serving, tracking, keys and the lifecycle; tests move it. */
  clock?: () => number;
  /**
   * What the limits time their refills and waits with: a clock that never steps back
   * (`monotonicNow`), so stepping the wall clock back refuses no one; tests move it.
   */
  monotonic?: () => number;
  /** Addresses or CIDR ranges of the reverse proxies whose `X-Forwarded-For` names the client. */
  trustedProxies?: readonly string[];
  /** Replaces the event sink (tests use a failing one). */
  events?: (store: Store, onCapReached: () => void) => EventSink;
  /** The rate limiter (D7); in this instance's memory unless given (server.ts passes Redis's). */
  limiter?: RateLimiter;
  /** Unclicked impressions (D15); in this instance's memory unless given (server.ts passes Redis's). */
  clickCredits?: ClickCredits;
  /** Signs serve tokens (D15); server.ts passes the configured or stored one, tests a random one. */
  serveTokenSecret?: Buffer;
  /** What each serve token was used for (D15); in memory unless given (server.ts passes Redis's). */
  serveTokenStates?: ServeTokenStates;
  /** What viewers were shown of frequency-capped campaigns (D20); in memory unless given (Redis's). */
  viewerFrequency?: ViewerFrequency;
  /** Where people reach the dashboard: the start of one-time links (default http://127.0.0.1:8080). */
  publicUrl?: string;
  /** How often the key flag job judges every key (D15; default `FLAG_INTERVAL_MS`, 30 s). */
  flagIntervalMs?: number;
  /** Even pacing's assumed fetches an hour of a placement without a full day of traffic (config.ts). */
  pacingPriorFetchesPerHour?: number;
  /** The currency of every amount (`PLACARD_CURRENCY`; `DEFAULT_CURRENCY` unless given). */
  currency?: string;
  /** How old a partner's `occurredAt` may be (default `DEFAULT_EVENT_TIME_WINDOW_MS`, 15 minutes). */
  eventTimeWindowMs?: number;
  /** The IANA time zone of billing dates (`PLACARD_BILLING_TIME_ZONE`; default UTC). */
  billingTimeZone?: string;
  /** The smallest payout to a partner, in micros (`PLACARD_MINIMUM_PAYOUT`; default 0). */
  minimumPayoutMicros?: Micros;
  /** Webhook endpoints on this machine allowed (`PLACARD_WEBHOOKS_ALLOW_LOOPBACK`; default false). */
  webhooksAllowLoopback?: boolean;
  /** Webhook endpoints on private networks allowed (`PLACARD_WEBHOOKS_ALLOW_PRIVATE`; default false). */
  webhooksAllowPrivate?: boolean;
}

/**
 * Background work of one instance, each on a timer of its own: `server.ts` starts the jobs in
 * their list's order once the serving index is loaded, and stops them in reverse at close.
 */
export interface Job {
  /** How logs and tests name it. */
  readonly name: string;
  start(): void;
  /**
   * Clears its timer; a job on `Periodic` also waits for a pass under way, and key usage writes
   * what it noted.
   */
  stop(): Promise<void> | void;
  /** True from `start` until `stop` has returned: its timer is set. */
  readonly scheduled: boolean;
}

/** What a job's class offers; `job` gives it its name in the list. */
type JobWork = Omit<Job, 'name'>;

const job = (name: string, work: JobWork): Job => ({
  name,
  start: () => work.start(),
  stop: () => work.stop(),
  get scheduled() {
    return work.scheduled;
  },
});

export interface Services {
  /** Every job of the instance, in the order they start; they stop in reverse. */
  jobs: readonly Job[];
  state: ServingState;
  events: EventSink;
  delivery: DeliveryService;
  tokens: AdminTokens;
  keyUsage: KeyUsage;
  lifecycle: LifecycleJob;
  retention: RetentionJob;
  compaction: RollupCompactionJob;
  /** SQLite: sums the rollup rows and charges batches append into their tables (migrations 024, 025). */
  fold: FoldJob;
  /** Delivers the webhook outbox (D19). */
  webhooks: WebhookDeliveryJob;
  /** Even pacing's steps (D16): holds back or boosts even campaigns in the index. */
  pacing: PacingJob;
  /** Flags keys whose traffic looks fraudulent or broken (D15). */
  flags: KeyFlagJob;
  /** What the flag job judges: the events this instance stored lately, counted in memory. */
  recentTraffic: RecentTraffic;
  metrics: Metrics;
  limiter: RateLimiter;
  appDeps: AppDeps;
}

/**
 * Creates the services of one instance and how they connect, in one place, for `server.ts` and the
 * tests alike (so tests exercise the same wiring the product runs). Nothing is started here: the
 * jobs are listed in `jobs` for `server.ts` to start.
 */
export function wireServices(store: Store, logger: Logger, options: WiringOptions): Services {
  const clock = options.clock ?? Date.now;
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:8080';
  const state = new ServingState(store, logger, options.refreshIntervalMs, clock);
  const monotonic = options.monotonic ?? monotonicNow;
  const limiter = options.limiter ?? new MemoryRateLimiter(monotonic);
  const clientAddress = clientAddressBehind(options.trustedProxies ?? [], (peer) =>
    logger.warn(
      { peer },
      'a request came with X-Forwarded-For from an address that is not a trusted proxy; it was ignored ' +
        '(if that is your load balancer, list it in PLACARD_TRUSTED_PROXIES, or every client behind it counts as one)',
    ),
  );
  const metrics = new Metrics(state, limiter);
  // The partner API subscribes when it is built; the batcher tells it of each settled batch.
  const settledListeners: Array<() => void> = [];
  const writes = new EventWrites(logger, clock);
  const events =
    options.events?.(store, () => state.changed()) ??
    new GroupCommitSink(
      store,
      (error) => writes.failed(error),
      // A campaign this instance completed or held at its cap leaves its index at once.
      () => state.changed(),
      {
        ...DEFAULT_GROUP_COMMIT,
        concurrency: store.traits.commitConcurrency,
      },
      {
        committed: (size, seconds, failed) => {
          metrics.observeBatch(size, seconds, failed);
          if (!failed) writes.stored();
        },
        stored: (counts) => metrics.countEvents(counts),
        settled: () => {
          for (const listener of settledListeners) listener();
        },
      },
    );
  // One secret signs serve tokens and keys viewers (D20), so every instance agrees on both.
  const secret = options.serveTokenSecret ?? randomBytes(32);
  const judge = new TrafficJudge(options.clickCredits, new ServeTokens(secret), options.serveTokenStates);
  // What the key flag job judges, counted as events are stored (serving/recent-traffic.ts).
  const recentTraffic = new RecentTraffic();
  const delivery = new DeliveryService(
    state,
    events,
    clock,
    judge,
    recentTraffic,
    options.eventTimeWindowMs,
    options.viewerFrequency,
    new ViewerKeys(secret),
  );
  const tokens = new AdminTokens(store, clock);
  const keyUsage = new KeyUsage(store, logger);
  const lifecycle = new LifecycleJob(store, logger, options.refreshIntervalMs, clock);
  const retention = new RetentionJob(store, logger, options.eventRetentionDays, clock);
  const compaction = new RollupCompactionJob(store, logger, clock);
  const fold = new FoldJob(store, logger);
  const webhookAllowance = {
    loopback: options.webhooksAllowLoopback ?? false,
    privateNetworks: options.webhooksAllowPrivate ?? false,
  };
  const webhooks = new WebhookDeliveryJob(
    store,
    logger,
    { allowLoopback: webhookAllowance.loopback, allowPrivateNetworks: webhookAllowance.privateNetworks },
    clock,
  );
  const pacing = new PacingJob(store, state, logger, clock, undefined, options.pacingPriorFetchesPerHour);
  const flags = new KeyFlagJob(store, recentTraffic, logger, clock, state, options.flagIntervalMs);
  const shutdown = new Shutdown();
  // What the management API and the dashboard call; each change tells `state` once it commits.
  const management = new ManagementServices({
    store,
    clock,
    publicUrl,
    serving: state,
    index: () => state.index,
    paceOf: (id) => state.paceOf(id),
    currency: options.currency ?? DEFAULT_CURRENCY,
    billingTimeZone: options.billingTimeZone ?? 'UTC',
    minimumPayoutMicros: options.minimumPayoutMicros ?? (0 as Micros),
    webhookAllowance,
  });
  const appDeps: AppDeps = {
    version: VERSION,
    limiter,
    clientAddress,
    monotonic,
    shutdown,
    metrics,
    store,
    readiness: new ReadinessMonitor({ store, writes, shutdown, limiter, logger }),
    logger,
    state,
    delivery,
    accessLog: options.accessLog,
    fetchMaxAgeSeconds: options.fetchMaxAgeSeconds ?? DEFAULT_FETCH_MAX_AGE_SECONDS,
    admin: { services: management, tokens, clock },
    dashboard: {
      services: management,
      sessions: new Sessions(store, clock, monotonic),
      clock,
      clientAddress,
      publicUrl,
      paceOf: (id) => state.paceOf(id),
    },
    onKeyUse: keyUsage.touch,
    onBrowserUse: keyUsage.browserUse,
    onEventsSettled: (listener) => settledListeners.push(listener),
    eventQueueDepth: () => events.depth ?? 0,
  };
  // Started in this order and stopped in reverse: the serving index polls before the jobs that
  // change it (pacing, key flags) start, and until they have stopped.
  const jobs = [
    job('serving-state', state),
    job('lifecycle', lifecycle),
    job('retention', retention),
    job('rollup-compaction', compaction),
    job('fold', fold),
    job('pacing', pacing),
    job('key-flags', flags),
    job('key-usage', keyUsage),
    job('webhooks', webhooks),
  ];
  return {
    jobs,
    state,
    events,
    delivery,
    tokens,
    keyUsage,
    lifecycle,
    retention,
    compaction,
    fold,
    webhooks,
    pacing,
    flags,
    recentTraffic,
    metrics,
    limiter,
    appDeps,
  };
}
