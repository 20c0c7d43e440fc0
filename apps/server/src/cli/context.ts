import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect, missingStoreFile } from '../store/connect.js';
import type { MigrationReport } from '../store/migrate.js';
import { Store } from '../store/store.js';
import { emit, reportFailure, type OutputOptions } from './output.js';

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
  const file = missingStoreFile(config.databaseUrl);
  if (file === undefined) return;
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
  body: (store: Store, config: Config, migrated: MigrationReport) => Promise<void>,
  use: StoreUse = {},
): Promise<void> {
  let store: Store | undefined;
  try {
    const config = loadConfig();
    if (!use.create) refuseMissingStore(config);
    store = new Store(connect(config.databaseUrl), { billingTimeZone: config.billingTimeZone });
    const migrated = await store.migrate();
    await body(store, config, migrated);
  } catch (error) {
    reportFailure(options, error);
  } finally {
    await store?.close();
  }
}

/** What a command's body works with: the migrated store and the configuration it was opened from. */
export interface StoreContext {
  store: Store;
  config: Config;
  /** What opening it migrated (`placard migrate` says what it applied). */
  migrated: MigrationReport;
}

/** Declares the `--json` option every command accepts (see `emit`). */
export function jsonOption(command: Command): Command {
  return command.option('--json', 'print JSON');
}

/**
 * A commander action that runs `body` in `withStore`. Commander passes the command's arguments,
 * then its options, then the command itself; `body` gets the store, the options, then the arguments.
 */
export function inStore<Options extends OutputOptions>(
  body: (context: StoreContext, options: Options, ...args: string[]) => Promise<void>,
  use: StoreUse = {},
): (...received: unknown[]) => Promise<void> {
  return (...received) => {
    const args = received.slice(0, -2) as string[];
    const options = received[received.length - 2] as Options;
    return withStore(
      options,
      (store, config, migrated) => body({ store, config, migrated }, options, ...args),
      use,
    );
  };
}

/** Ends a command's declaration the way most end: the `--json` option, then an action in the store. */
export function storeAction<Options extends OutputOptions>(
  command: Command,
  body: (context: StoreContext, options: Options, ...args: string[]) => Promise<void>,
  use: StoreUse = {},
): Command {
  return jsonOption(command).action(inStore(body, use));
}

/** Parses a positive integer argument such as an id, or throws a clear message. */
export function positiveInteger(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new Error(`${what} must be a positive integer (got "${value}")`);
  return Number(value);
}

/**
 * Declares the commands that print the one record they answer, which all end alike: as
 * `storeAction` ends a declaration, with `run` given the store, the options and the arguments, and
 * the record it answers printed, `json` of it with `--json`, otherwise the line `said` makes of it.
 */
export function recordAction<Found>(json: (found: Found) => unknown) {
  return <Options>(
    command: Command,
    run: (store: Store, options: Options, ...args: string[]) => Promise<Found>,
    said: (found: Found) => string,
  ): Command =>
    storeAction(command, async ({ store }, options: OutputOptions & Options, ...args: string[]) => {
      const found = await run(store, options, ...args);
      emit(options, json(found), () => console.log(said(found)));
    });
}

/**
 * Declares the commands on one record of a kind by its numeric id (`<verb> <id>`), as
 * `recordAction` does, with `run` given the id parsed (`what` names it when it is not a positive
 * integer: `key id`).
 */
export function idAction<Found>(what: string, json: (found: Found) => unknown) {
  const declare = recordAction(json);
  return <Options>(
    command: Command,
    run: (store: Store, id: number, options: Options) => Promise<Found>,
    said: (found: Found) => string,
  ): Command =>
    declare(
      command,
      (store, options: Options, id: string) => run(store, positiveInteger(id, what), options),
      said,
    );
}
