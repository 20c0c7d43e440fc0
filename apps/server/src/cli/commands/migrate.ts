import type { Command } from 'commander';
import { storeAction } from '../context.js';
import { counted, emit, type OutputOptions } from '../output.js';

export function registerMigrate(program: Command): void {
  storeAction(
    program
      .command('migrate')
      .description('apply pending storage migrations (serve also does this at start)'),
    async ({ store, migrated }, options: OutputOptions) => {
      // withStore has already migrated: say what that applied, then what is now in place.
      const { applied } = migrated;
      const pending = await store.pendingMigrations();
      emit(options, { store: store.engine, location: store.location, applied, pending }, () =>
        console.log(migrateSummary(`${store.engine} store at ${store.location}`, applied, pending)),
      );
    },
    { create: true },
  );
}

/** What `placard migrate` did, in words: the migrations it applied by name, or that none was due. */
export function migrateSummary(storeName: string, applied: string[], pending: string[]): string {
  const now = pending.length === 0 ? 'up to date' : `${pending.length} still pending (${pending.join(', ')})`;
  if (applied.length === 0)
    return pending.length === 0
      ? `${storeName} is already up to date (nothing to apply)`
      : `${storeName}: applied nothing; ${now}`;
  return `${storeName}: applied ${counted(applied.length, 'migration')}: ${applied.join(', ')}; now ${now}`;
}
