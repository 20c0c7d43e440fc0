import { afterEach } from 'vitest';
import { connect } from '../../src/store/connect.js';
import { Store } from '../../src/store/store.js';
import { createDatabase, type Engine, type TestDatabase } from './engines.js';

/**
 * For a migration's test: a database made by `create`, and stores opened on it migrated up to a
 * named migration (`open('022-advertiser-budgets')`) or to the latest (`open()`); after each test,
 * every store opened is closed and the database dropped. `reopen` closes the stores open so far
 * first, as a release stopping before the next one starts.
 */
export function migratingStore() {
  let database: TestDatabase | undefined;
  const stores: Store[] = [];
  const closeAll = () => Promise.all(stores.splice(0).map((store) => store.close()));
  afterEach(async () => {
    await closeAll();
    await database?.drop();
    database = undefined;
  });
  return {
    async create(engine: Engine): Promise<void> {
      database = await createDatabase(engine);
    },
    async open(until?: string): Promise<Store> {
      if (!database) throw new Error('migratingStore: create the database first');
      const store = new Store(connect(database.url));
      stores.push(store);
      await store.migrate(until);
      return store;
    },
    async reopen(until?: string): Promise<Store> {
      await closeAll();
      return this.open(until);
    },
  };
}
