import fs from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect } from '../store/connect.js';
import { Store } from '../store/store.js';
import { reportFailure, type OutputOptions } from './output.js';

export interface StoreUse {
  /** Create the store when it does not exist yet (only `migrate` and `demo`, which set one up). */
  create?: boolean;
}

/**
 * A SQLite store that does not exist yet is refused rather than created: opening one would
 * otherwise make a new empty store wherever a mistyped PLACARD_DATA_DIR, or another working
 * directory, points, and the command would answer from it as if nothing were there.
 */
function refuseMissingStore(config: Config): void {
  if (!config.databaseUrl.startsWith('sqlite:')) return;
  const file = config.databaseUrl.slice('sqlite:'.length);
  if (fs.existsSync(file)) return;
  throw new ConfigError(
    `no Placard store at ${file}: check PLACARD_DATA_DIR (or PLACARD_DATABASE_URL) and the working ` +
      'directory, or create the store with "placard migrate" (or start the server with "npm start")',
  );
}

/**
 * Runs a command body with a migrated store, closing it afterwards and turning any failure into a
 * clear message and a non-zero exit code.
 */
export async function withStore(
  options: OutputOptions,
  body: (store: Store, config: Config) => Promise<void>,
  use: StoreUse = {},
): Promise<void> {
  let store: Store | undefined;
  try {
    const config = loadConfig();
    if (!use.create) refuseMissingStore(config);
    store = new Store(connect(config.databaseUrl));
    await store.migrate();
    await body(store, config);
  } catch (error) {
    reportFailure(options, error);
  } finally {
    await store?.close();
  }
}

/** Parses a positive integer argument such as an id, or throws a clear message. */
export function positiveInteger(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new Error(`${what} must be a positive integer (got "${value}")`);
  return Number(value);
}
