import type { Store } from '../../src/store/store.js';
import { createDatabase, type TestDatabase } from './engines.js';

/**
 * Runs `use` on a store of a fresh, migrated database of `engine`, for a test that needs one of its
 * own; then closes the store and drops the database, whatever `use` did.
 */
export async function withFreshStore<T>(
  engine: 'sqlite' | 'postgres',
  use: (store: Store, database: TestDatabase) => Promise<T>,
): Promise<T> {
  const database = await createDatabase(engine);
  try {
    const store = await database.open();
    try {
      return await use(store, database);
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}
