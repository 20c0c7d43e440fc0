import type { Command } from 'commander';
import { storeAction } from '../context.js';
import { emit, type OutputOptions } from '../output.js';

export function registerMigrate(program: Command): void {
  storeAction(
    program
      .command('migrate')
      .description('apply pending storage migrations (serve also does this at start)'),
    async ({ store }, options: OutputOptions) => {
      // withStore has already migrated; report what is now in place.
      const pending = await store.pendingMigrations();
      emit(options, { store: store.engine, location: store.location, pending }, () =>
        console.log(`${store.engine} store at ${store.location} is up to date (${pending.length} pending)`),
      );
    },
    { create: true },
  );
}
