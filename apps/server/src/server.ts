import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { buildApp } from './http/app.js';
import { createLogger } from './logger.js';
import { RedisClickCredits } from './limits/click-credits.js';
import { RedisViewerFrequency } from './limits/viewer-frequency.js';
import { RedisRateLimiter } from './limits/redis-limiter.js';
import { RedisServeTokenStates } from './limits/serve-token-states.js';
import { startTokenNotices, type StartTokenNotice } from './services/admin-tokens.js';
import { serveTokenSecret } from './serving/serve-token-secret.js';
import { connect } from './store/connect.js';
import { Store } from './store/store.js';
import { wireServices, type Services } from './wiring.js';

/**
 * How long, once the instance stops listening, open connections have to finish (a request still
 * arriving, a client that has not yet read its answer) before they are cut; what remains of
 * `CLOSE_BUDGET_MS` is for the flushes.
 */
const CONNECTIONS_BUDGET_MS = 7_000;
/** How long closing may take after the drain delay before the process exits anyway. */
const CLOSE_BUDGET_MS = 10_000;

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  state: Services['state'];
  /** The instance's background jobs, in the order they started; `close` stops each. */
  jobs: Services['jobs'];
  logger: Logger;
  /** The address actually bound, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** An admin token generated at this start (first start without one configured), shown once. */
  generatedAdminToken: string | undefined;
  /** How long `close` keeps accepting connections to answer them 503 (`PLACARD_DRAIN_DELAY_MS`). */
  drainDelayMs: number;
  /** What start found of PLACARD_ADMIN_TOKEN's tokens, already logged, for `placard serve` to print. */
  adminTokenNotices: StartTokenNotice[];
  /** Stops accepting requests, answers those in flight, flushes events and closes the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Runs after migrations and before the index is loaded (the demo seeds here). */
  beforeLoad?: (store: Store) => Promise<void>;
  logger?: Logger;
}

/** Opens the store, migrates it, loads the serving index and listens. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const onConnectionError = (error: Error) =>
    logger.warn({ err: error }, 'the database closed a connection; it is replaced on next use');
  // Migrations may run long statements on purpose (an index on a large table), so they run on a
  // connection of their own without the serving deadline.
  const migrator = new Store(connect(config.databaseUrl, onConnectionError));
  try {
    const { applied, ahead } = await migrator.migrate();
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    if (ahead.length > 0)
      logger.warn(
        { ahead },
        'the store was migrated by a newer version of Placard; serving without migrating',
      );
    // PostgreSQL: the coming days' event partitions exist before this instance stores an event.
    const created = await migrator.ensureEventPartitions(Date.now(), config.eventRetentionDays);
    if (created.length > 0) logger.info({ partitions: created }, 'event partitions created');
  } finally {
    await migrator.close();
  }
  const store = new Store(
    connect(config.databaseUrl, onConnectionError, { deadlineMs: config.storeDeadlineMs, busyTimeoutMs: 0 }),
    { billingTimeZone: config.billingTimeZone },
  );
  // Everything started from here on is stopped again, in reverse order, at close or when the
  // start fails: a start that fails half-way must not leave jobs polling and a Redis connection
  // keeping the process alive.
  const started = new StartedParts(logger);
  started.add(() => store.close());
  try {
    await options.beforeLoad?.(store);
    const limiter = config.redisUrl
      ? await RedisRateLimiter.connect(config.redisUrl, logger, undefined, config.redisKeyPrefix)
      : undefined;
    if (limiter) started.add(() => limiter.close());
    const { state, events, tokens, jobs, appDeps } = wireServices(store, logger, {
      ...config,
      serveTokenSecret: await serveTokenSecret(store, config.tokenSecret),
      ...(limiter && {
        limiter,
        clickCredits: new RedisClickCredits(limiter),
        serveTokenStates: new RedisServeTokenStates(limiter),
        viewerFrequency: new RedisViewerFrequency(limiter),
      }),
    });
    const startTokens = await tokens.ensure(config.adminToken, config.revokePreviousAdminTokens);
    const generatedAdminToken = startTokens.generated;
    const adminTokenNotices = startTokenNotices(startTokens);
    for (const notice of adminTokenNotices)
      logger[notice.level]({ adminToken: notice.tokenId }, notice.message);
    await state.load();
    // In the wiring's order; `stopAll` stops them in reverse.
    for (const job of jobs) {
      job.start();
      started.add(() => job.stop());
    }
    // Registered last so that it runs first after the app closes: acknowledged events are
    // committed before anything waits for a job's pass to end.
    started.add(() => events.close());
    const app = await buildApp(appDeps);
    started.add(() => app.close());
    const address = await listen(app, config.host, config.port);
    logger.info({ address, store: store.engine, location: store.location }, 'placard listening');

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        // First fail readiness and answer every new request 503 (with Connection: close) while
        // still listening, for as long as a load balancer needs to notice and stop sending
        // connections: a connection waiting in the kernel's queue when the instance stops
        // listening is reset, so the instance stops only once none should come. Then let the
        // open connections finish (see ConnectionDrain), cutting stragglers after a budget so
        // that the events are always flushed.
        appDeps.shutdown.begin();
        await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
        await appDeps.shutdown.drainConnections(CONNECTIONS_BUDGET_MS);
        await started.stopAll();
      })());
    return {
      app,
      store,
      state,
      jobs,
      logger,
      url: address,
      generatedAdminToken,
      drainDelayMs: config.drainDelayMs,
      adminTokenNotices,
      close,
    };
  } catch (error) {
    logger.error({ err: error }, 'start failed; stopping what it started');
    await started.stopAll().catch(() => undefined);
    throw error;
  }
}

/**
 * A port already taken (most often by the demo's `npm start`, still running) named with what to do
 * about it, where `listen EADDRINUSE` alone leaves an operator guessing; any other failure as it is.
 */
async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EADDRINUSE')) throw error;
    throw new Error(
      `port ${port} on ${host} is already in use (EADDRINUSE: another Placard or another program): ` +
        'stop it, or set PLACARD_PORT to another port',
      { cause: error },
    );
  }
}

/** What a start has started so far, each with how to stop it. */
class StartedParts {
  private readonly stops: Array<() => unknown> = [];

  constructor(private readonly logger: Logger) {}

  add(stop: () => unknown): void {
    this.stops.push(stop);
  }

  /** Stops everything, last started first; a step that fails is logged and the rest still run. */
  async stopAll(): Promise<void> {
    let firstError: Error | undefined;
    for (const stop of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        this.logger.error({ err: error }, 'stopping failed');
        firstError ??= error instanceof Error ? error : new Error(String(error));
      }
    }
    if (firstError !== undefined) throw firstError;
  }
}

/** What `closeOnSignals` needs of the process: its signals and its exit (a test passes its own). */
export type SignalledProcess = Pick<NodeJS.Process, 'on' | 'exit'>;

/**
 * Closes the server on SIGTERM or SIGINT. The budget, the drain delay and 10 s after it, is a timer
 * started when the signal arrives: past it the process logs that closing took too long and exits
 * 1; within it, it logs `shut down` with how long closing took, and exits 0. A second signal while
 * draining is ignored rather than left to end the process at once: Ctrl-C in a terminal reaches
 * both the server and the npm script wrapping it, which passes it on too.
 */
export function closeOnSignals(
  server: Pick<RunningServer, 'logger' | 'drainDelayMs' | 'close'>,
  host: SignalledProcess = process,
): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    const signalledAt = performance.now();
    const budgetMs = server.drainDelayMs + CLOSE_BUDGET_MS;
    server.logger.info({ signal, budgetMs }, 'shutting down');
    const force = setTimeout(() => {
      server.logger.error(
        `shutdown took longer than ${CLOSE_BUDGET_MS / 1000} s after the drain delay; exiting`,
      );
      host.exit(1);
    }, budgetMs).unref();
    server.close().then(
      () => {
        clearTimeout(force);
        server.logger.info({ ms: Math.round(performance.now() - signalledAt), budgetMs }, 'shut down');
        host.exit(0);
      },
      (error: unknown) => {
        clearTimeout(force);
        server.logger.error({ err: error }, 'shutdown failed');
        host.exit(1);
      },
    );
  };
  host.on('SIGTERM', () => shutdown('SIGTERM'));
  host.on('SIGINT', () => shutdown('SIGINT'));
}
