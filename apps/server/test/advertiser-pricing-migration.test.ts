import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';

/**
 * Migration 023 on each engine: an advertiser stored before it (by a release that knew nothing of
 * who prices its campaigns) is priced by the operator alone afterwards, as it was, and one stored
 * since may be let price its own.
 */
describe.each(ENGINES)('migration 023 (advertiser pricing) on %s', (engine) => {
  let database: TestDatabase | undefined;
  const stores: Store[] = [];
  const open = async (until?: string) => {
    const store = new Store(connect(database!.url));
    stores.push(store);
    await store.migrate(until);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await database?.drop();
  });

  it('keeps the advertisers stored before it priced by the operator, and stores the choice after it', async () => {
    database = await createDatabase(engine);
    const before = await open('022-advertiser-budgets');
    // The columns the release before 023 writes.
    const { id } = await before.db
      .insertInto('advertisers')
      .values({ name: 'Before 023', created_at: 1, updated_at: 1 } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await before.pendingMigrations())[0]).toBe('023-advertiser-pricing');
    await before.close();
    stores.splice(0);

    const store = await open();
    expect(await store.pendingMigrations()).toEqual([]);
    expect((await store.findAdvertiser(Number(id)))?.pricing).toBe('operator');
    const after = await store.createAdvertiser('After 023');
    expect(after.pricing).toBe('operator');
    await store.setAdvertiserPricing(after.id, 'advertiser');
    expect((await store.findAdvertiser(after.id))?.pricing).toBe('advertiser');
    expect((await store.findAdvertiser(Number(id)))?.pricing).toBe('operator');
  });
});
