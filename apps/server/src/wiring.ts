import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppDeps } from './http/app.js';
import { Shutdown } from './http/shutdown.js';
import { DEFAULT_FETCH_MAX_AGE_SECONDS } from './config.js';
import type { EventSink } from './ingest/event-sink.js';
import { DEFAULT_GROUP_COMMIT, GroupCommitSink } from './ingest/group-commit.js';
import { AdminTokens } from './services/admin-tokens.js';
import { DeliveryService } from './services/delivery.js';
import { TrafficJudge } from './services/traffic-judge.js';
import { EventWrites } from './services/event-writes.js';
import { KeyFlagJob } from './services/key-flag-job.js';
import { KeyUsage } from './services/key-usage.js';
import { LifecycleJob } from './services/lifecycle-job.js';
import type { ClickCredits } from './limits/click-credits.js';
import type { ServeTokenStates } from './limits/serve-token-states.js';
import { ServeTokens } from './domain/serve-tokens.js';
import { MemoryRateLimiter, type RateLimiter } from './limits/rate-limiter.js';
import { Metrics } from './services/metrics.js';
import { PacingJob } from './services/pacing-job.js';
import { RecentTraffic } from './services/recent-traffic.js';
import { RetentionJob } from './services/retention-job.js';
import { RollupCompactionJob } from './services/rollup-compaction-job.js';
import { ServingState } from './services/serving-state.js';
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
  /** Where people reach the dashboard: the start of one-time links (default http://localhost:8080). */
  publicUrl?: string;
  /** How often the key flag job judges every key (D15; default `FLAG_INTERVAL_MS`, 30 s). */
  flagIntervalMs?: number;
}

export interface Services {
  state: ServingState;
  events: EventSink;
  delivery: DeliveryService;
  tokens: AdminTokens;
  keyUsage: KeyUsage;
  lifecycle: LifecycleJob;
  retention: RetentionJob;
  compaction: RollupCompactionJob;
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
 * tests alike (so tests exercise the same wiring the product runs). Nothing is started here.
 */
export function wireServices(store: Store, logger: Logger, options: WiringOptions): Services {
  const clock = options.clock ?? Date.now;
  const publicUrl = options.publicUrl ?? 'http://localhost:8080';
  const state = new ServingState(store, logger, options.refreshIntervalMs, clock);
  const limiter = options.limiter ?? new MemoryRateLimiter(clock);
  const metrics = new Metrics(state, limiter);
  const refreshNow = (): void =>
    void state
      .refresh()
      .catch((error: unknown) => logger.error({ err: error }, 'refreshing the serving index failed'));
  // The partner API subscribes when it is built; the batcher tells it of each settled batch.
  const settledListeners: Array<() => void> = [];
  const writes = new EventWrites(logger, clock);
  const events =
    options.events?.(store, refreshNow) ??
    new GroupCommitSink(
      store,
      (error) => writes.failed(error),
      refreshNow,
      {
        ...DEFAULT_GROUP_COMMIT,
        // PostgreSQL commits wait on the network and the server's fsync: keep a few in flight.
        concurrency: store.engine === 'postgres' ? 4 : 1,
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
  const judge = new TrafficJudge(
    options.clickCredits,
    new ServeTokens(options.serveTokenSecret ?? randomBytes(32)),
    options.serveTokenStates,
  );
  // What the key flag job judges, counted as events are stored (services/recent-traffic.ts).
  const recentTraffic = new RecentTraffic();
  const delivery = new DeliveryService(state, events, clock, judge, recentTraffic);
  const tokens = new AdminTokens(store, clock);
  const keyUsage = new KeyUsage(store, logger);
  const lifecycle = new LifecycleJob(store, logger, options.refreshIntervalMs, clock);
  const retention = new RetentionJob(store, logger, options.eventRetentionDays, clock);
  const compaction = new RollupCompactionJob(store, logger, clock);
  const pacing = new PacingJob(store, state, logger, clock);
  const flags = new KeyFlagJob(store, recentTraffic, logger, clock, refreshNow, options.flagIntervalMs);
  const appDeps: AppDeps = {
    version: VERSION,
    limiter,
    shutdown: new Shutdown(),
    metrics,
    store,
    writes,
    logger,
    state,
    delivery,
    accessLog: options.accessLog,
    fetchMaxAgeSeconds: options.fetchMaxAgeSeconds ?? DEFAULT_FETCH_MAX_AGE_SECONDS,
    admin: { store, tokens, clock, index: () => state.index, afterChange: refreshNow, publicUrl },
    dashboard: { store, sessions: new Sessions(store, clock), clock, publicUrl, afterChange: refreshNow },
    onKeyUse: keyUsage.touch,
    onBrowserUse: keyUsage.browserUse,
    onEventsSettled: (listener) => settledListeners.push(listener),
    eventQueueDepth: () => events.depth ?? 0,
  };
  return {
    state,
    events,
    delivery,
    tokens,
    keyUsage,
    lifecycle,
    retention,
    compaction,
    pacing,
    flags,
    recentTraffic,
    metrics,
    limiter,
    appDeps,
  };
}
