import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { buildApp } from './http/app.js';
import { createLogger } from './logger.js';
import { RedisClickCredits } from './limits/click-credits.js';
import { RedisRateLimiter } from './limits/redis-limiter.js';
import { RedisServeTokenStates } from './limits/serve-token-states.js';
import { serveTokenSecret } from './services/serve-token-secret.js';
import { connect } from './store/connect.js';
import { Store } from './store/store.js';
import { wireServices, type Services } from './wiring.js';

/** How long a closing instance keeps accepting connections only to answer them 503. */
const DRAIN_GRACE_MS = 500;
/**
 * How long, after that, open connections have to finish (a request still arriving, a client that
 * has not yet read its answer) before they are cut; what remains of the 10 s is for the flushes.
 */
const CONNECTIONS_BUDGET_MS = 7_000;

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  state: Services['state'];
  logger: Logger;
  /** The address actually bound, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** An admin token generated at this start (first start without one configured), shown once. */
  generatedAdminToken: string | undefined;
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
  );
  try {
    await options.beforeLoad?.(store);
    const limiter = config.redisUrl
      ? await RedisRateLimiter.connect(config.redisUrl, logger, Date.now, config.redisKeyPrefix)
      : undefined;
    const { state, events, tokens, keyUsage, lifecycle, retention, compaction, pacing, flags, appDeps } =
      wireServices(store, logger, {
        ...config,
        serveTokenSecret: await serveTokenSecret(store, config.tokenSecret),
        ...(limiter && {
          limiter,
          clickCredits: new RedisClickCredits(limiter),
          serveTokenStates: new RedisServeTokenStates(limiter),
        }),
      });
    const generatedAdminToken = await tokens.ensure(config.adminToken);
    await state.load();
    state.start();
    lifecycle.start();
    retention.start();
    compaction.start();
    pacing.start();
    flags.start();
    keyUsage.start();
    const app = await buildApp(appDeps);
    const address = await app.listen({ host: config.host, port: config.port });
    logger.info({ address, store: store.engine, location: store.location }, 'placard listening');

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= (async () => {
        // First refuse new partner requests with 503 while still listening, so connections
        // already queued or on their way are accepted and answered rather than reset; then
        // stop listening and let the open connections finish (see ConnectionDrain), cutting
        // stragglers after a budget so that the events are always flushed.
        appDeps.shutdown.begin();
        await new Promise((resolve) => setTimeout(resolve, DRAIN_GRACE_MS));
        await appDeps.shutdown.drainConnections(CONNECTIONS_BUDGET_MS);
        await app.close();
        await events.close();
        await lifecycle.stop();
        await retention.stop();
        await compaction.stop();
        await pacing.stop();
        await flags.stop();
        state.stop();
        await keyUsage.stop();
        await appDeps.limiter.close();
        await store.close();
      })());
    return { app, store, state, logger, url: address, generatedAdminToken, close };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Closes the server on SIGTERM or SIGINT, forcing an exit if draining takes longer than 10 s. A
 * second signal while draining is ignored rather than left to end the process at once: Ctrl-C in a
 * terminal reaches both the server and the npm script wrapping it, which passes it on too.
 */
export function closeOnSignals(server: RunningServer): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    server.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      server.logger.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
    server.close().then(
      () => {
        clearTimeout(force);
        process.exit(0);
      },
      (error: unknown) => {
        server.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
