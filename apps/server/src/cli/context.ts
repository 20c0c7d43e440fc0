import { loadConfig, type Config } from '../config.js';
import { connect } from '../store/connect.js';
import { Store } from '../store/store.js';
import { reportFailure, type OutputOptions } from './output.js';

/**
 * Runs a command body with a migrated store, closing it afterwards and turning any failure into a
 * clear message and a non-zero exit code.
 */
export async function withStore(
  options: OutputOptions,
  body: (store: Store, config: Config) => Promise<void>,
): Promise<void> {
  let store: Store | undefined;
  try {
    const config = loadConfig();
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
