import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type Driver } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Engine = 'sqlite' | 'postgres';

const OWNER_ONLY_DIRECTORY = 0o700;
const OWNER_ONLY_FILE = 0o600;

export interface Connection {
  readonly db: Kysely<Database>;
  readonly engine: Engine;
  /** The SQLite handle under `db`, for the event ledger's prepared statements (SQLite only). */
  readonly sqlite?: BetterSqlite3.Database;
  /** Where the data lives, without credentials, for logs and `placard` output. */
  readonly location: string;
  close(): Promise<void>;
}

const requireHere = createRequire(import.meta.url);

/**
 * The SQLite driver for the running Node. better-sqlite3 12 is the last line that runs on Node 20
 * but aborts on Node 24 when V8 collects a statement (Node 24 changed `ObjectWrap`); 13 runs on
 * Node 22 and later only. 12 is installed always, 13 (as `better-sqlite3-13`, an optional
 * dependency) by an install under Node 22 or later, and the running Node picks; once Node 20 is no
 * longer supported, 13 alone remains.
 */
export function loadSqliteDriver(
  nodeVersion = process.versions.node,
  load: (name: string) => unknown = requireHere,
): typeof BetterSqlite3 {
  if (Number(nodeVersion.split('.')[0]) < 22) return load('better-sqlite3') as typeof BetterSqlite3;
  try {
    return load('better-sqlite3-13') as typeof BetterSqlite3;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `Node ${nodeVersion} needs better-sqlite3 13, which npm installs only under Node 22 or later: ` +
        'the packages were installed under an older Node; run "npm ci" again under this one',
    );
  }
}

/**
 * The page size of a store this server creates, in bytes. A commit writes every page it changed to
 * the write-ahead log whole, and a batch of events changes two or three pages of each table and
 * index it adds to, however few bytes it adds there: half SQLite's default of 4,096 wrote a fifth
 * fewer bytes per tracked event (3.2 KiB to 2.6) for the same throughput, while reading rollup rows
 * cost a sixth more (a long report's median 7%); at 1,024, two fifths more (docs/benchmarks.md,
 * "SQLite's page size").
 */
export const SQLITE_PAGE_SIZE = 2048;

/**
 * How large the write-ahead log grows before a commit copies it into the database (a checkpoint),
 * in bytes. SQLite counts it in pages (1,000 by default: about 4 MiB at 4,096), so at smaller pages
 * it would checkpoint twice as often (tracking measured 89.9% of the build before that way, 96.7%
 * with this, one run each); this keeps it at 4 MiB whatever the store's page size.
 */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** Loaded on the first SQLite file opened, so that a PostgreSQL deployment never needs it. */
let sqliteDriver: typeof BetterSqlite3 | undefined;

/**
 * Opens a SQLite file with the settings every connection must have: WAL so readers never block the
 * writer, synchronous=FULL so a committed event survives a power loss (D9), foreign keys on, and
 * a busy timeout so the CLI and the server can write the same file. A new file gets pages of
 * SQLITE_PAGE_SIZE.
 *
 * The store holds key digests, admin token digests and every partner's traffic, so a directory it
 * creates and a file it creates are its owner's only (0700 and 0600, whatever the umask); SQLite
 * gives the `-wal` and `-shm` files the database file's own permissions. Existing files and
 * directories keep the permissions their operator chose.
 */
export function openSqliteFile(file: string, busyTimeoutMs = 5_000): BetterSqlite3.Database {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: OWNER_ONLY_DIRECTORY });
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', OWNER_ONLY_FILE));
  sqliteDriver ??= loadSqliteDriver();
  const sqlite = new sqliteDriver(file);
  // Takes effect on a new file only (before its first write): a store keeps the page size it was
  // made with, which is why the checkpoint below reads it back.
  sqlite.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  const pageSize = Number(sqlite.pragma('page_size', { simple: true }));
  sqlite.pragma(`wal_autocheckpoint = ${Math.round(CHECKPOINT_BYTES / pageSize)}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  return sqlite;
}

/** int8 (epoch ms, ids from count()) as a JS number; our values stay below 2^53. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

/** Told when the database drops an idle pooled connection (restart, failover, administrator). */
export type ConnectionErrorHandler = (error: Error) => void;

const warnOnStderr: ConnectionErrorHandler = (error) =>
  console.warn(
    `placard: a PostgreSQL connection was closed by the server (${error.message}); reconnecting on next use`,
  );

/**
 * better-sqlite3 compiles SQL on every `prepare()`, and Kysely prepares every query it runs; the
 * same few statements (a batch insert of n events, a key lookup) repeat all day, so a small LRU
 * cache reuses their compiled form. Safe because nothing here streams (`iterate`) a statement. A
 * mode set on a statement (`raw`, `pluck`) stays with it for every user of the same text: only
 * statements whose text is one module's own set one (`charge-rows-sqlite.ts`, `event-ledger-sqlite.ts`).
 */
function cachingStatements(database: BetterSqlite3.Database, size = 256): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = database.prepare.bind(database);
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (statement) cache.delete(source);
    else statement = prepare(source);
    cache.set(source, statement);
    if (cache.size > size) cache.delete(cache.keys().next().value as string);
    return statement;
  }) as BetterSqlite3.Database['prepare'];
  return database;
}

export interface ConnectOptions {
  /**
   * PostgreSQL only: how long a statement may go unanswered, and how long getting a connection may
   * take, before it fails (0: no deadline). A server that accepts connections but stops answering
   * (stalled, or behind a black-holed network) then costs a request this long and a 503, instead
   * of holding it, and every request queued behind it, without end. The serving process sets it;
   * migrations and the CLI, which may run long statements on purpose, do not.
   */
  deadlineMs?: number;
  /**
   * SQLite only: how long a write waits for another connection's write lock, blocking the thread
   * (default 5000). The serving process sets 0 and retries a locked batch without blocking (see
   * `GroupCommitSink`), so another process holding the lock never freezes serving.
   */
  busyTimeoutMs?: number;
}

/** The text pg gives a statement that outlived `query_timeout`. */
export const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

/**
 * A statement past its deadline leaves the connection waiting for an answer that may never come,
 * and every later statement on it would queue behind that one: the connection is closed instead,
 * so the pool discards it and connects afresh.
 */
function discardOnDeadline(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise)
      result.catch((error: unknown) => {
        if (error instanceof Error && error.message === QUERY_DEADLINE_MESSAGE)
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      });
    return result;
  };
}

/**
 * Two changes to Kysely's SQLite driver.
 *
 * Transactions begin IMMEDIATE, taking the write lock at once. Kysely begins them DEFERRED: a read
 * first, the lock only at the first write. Every transaction here writes, usually after reading,
 * and in WAL mode a deferred transaction whose snapshot another process wrote past in the meantime
 * cannot take the lock at all: SQLite fails that write with "database is locked" at once, without
 * the busy timeout's wait. A `placard` command run beside a serving instance (whose jobs and
 * batches write every second) then failed now and then; begun IMMEDIATE it waits its turn instead.
 *
 * SQLite ends a transaction by itself after some errors (a full disk, an I/O error). Kysely then
 * sends its ROLLBACK anyway, which fails with "cannot rollback - no transaction is active", and that
 * error, not the one that says what went wrong, is what the caller got: thousands of log lines that
 * never said "disk full". This driver rolls back only a transaction that is still open.
 */
class SqliteDialectKeepingErrors extends SqliteDialect {
  constructor(private readonly sqlite: BetterSqlite3.Database) {
    super({ database: sqlite });
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (this.sqlite.inTransaction) await rollback(connection);
    };
    return driver;
  }
}

/** The SQLite file a config `databaseUrl` names (`sqlite:<file>`); undefined for a server's URL. */
function sqliteFileOf(databaseUrl: string): string | undefined {
  return databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : undefined;
}

/**
 * The file of the store `databaseUrl` names when that store does not exist yet, which opening it
 * would create: a SQLite file not there. Undefined otherwise, a server's database included (only
 * connecting could tell, and connecting creates nothing).
 */
export function missingStoreFile(databaseUrl: string): string | undefined {
  const file = sqliteFileOf(databaseUrl);
  return file === undefined || fs.existsSync(file) ? undefined : file;
}

/** Connects to the store named by a config `databaseUrl` (`sqlite:<file>` or `postgres://…`). */
export function connect(
  databaseUrl: string,
  onConnectionError: ConnectionErrorHandler = warnOnStderr,
  options: ConnectOptions = {},
): Connection {
  const file = sqliteFileOf(databaseUrl);
  if (file !== undefined) {
    const sqlite = cachingStatements(openSqliteFile(file, options.busyTimeoutMs));
    const db = new Kysely<Database>({ dialect: new SqliteDialectKeepingErrors(sqlite) });
    return { db, sqlite, engine: 'sqlite', location: file, close: () => db.destroy() };
  }
  const deadline = options.deadlineMs ?? 0;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    types: pgTypes,
    // Acknowledged events must survive a crash (D9), whatever the server's default is.
    options: '-c synchronous_commit=on',
    ...(deadline > 0 && { query_timeout: deadline, connectionTimeoutMillis: deadline }),
  });
  // Without a listener, a connection's error (the server restarting, an administrator ending the
  // backend, a proxy resetting it) is an uncaught exception that ends the process. The pool listens
  // only while a client is idle; a client checked out for a transaction needs its own listener for
  // the moment between two of its statements. Either way the statement in flight fails (its batch
  // answers 503) and the pool discards the broken client on release and connects a new one.
  // pg-pool hands on an idle client's error with the client attached (`error.client`); a logger
  // would write it out whole, the backend's cancel `secretKey` and the connection's password
  // included. The handler gets the error alone.
  const onError = (error: Error & { client?: unknown }) => {
    delete error.client;
    onConnectionError(error);
  };
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', onError);
    if (deadline > 0) discardOnDeadline(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const url = new URL(databaseUrl);
  return {
    db,
    engine: 'postgres',
    location: `${url.protocol}//${url.host}${url.pathname}`,
    close: () => db.destroy(),
  };
}
