import { describe, expect, it } from 'vitest';
import { ENGINES } from './helpers/engines.js';
import { migratingStore } from './helpers/migrating-store.js';

/**
 * Migration 023 on each engine: an advertiser stored before it (by a release that knew nothing of
 * who prices its campaigns) is priced by the operator alone afterwards, as it was, and one stored
 * since may be let price its own.
 */
describe.each(ENGINES)('migration 023 (advertiser pricing) on %s', (engine) => {
  const stores = migratingStore();

  it('keeps the advertisers stored before it priced by the operator, and stores the choice after it', async () => {
    await stores.create(engine);
    const before = await stores.open('022-advertiser-budgets');
    // The columns the release before 023 writes.
    const { id } = await before.db
      .insertInto('advertisers')
      .values({ name: 'Before 023', created_at: 1, updated_at: 1 } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await before.pendingMigrations())[0]).toBe('023-advertiser-pricing');
    const store = await stores.reopen();
    expect(await store.pendingMigrations()).toEqual([]);
    expect((await store.findAdvertiser(Number(id)))?.pricing).toBe('operator');
    const after = await store.createAdvertiser('After 023');
    expect(after.pricing).toBe('operator');
    await store.setAdvertiserPricing(after.id, 'advertiser');
    expect((await store.findAdvertiser(after.id))?.pricing).toBe('advertiser');
    expect((await store.findAdvertiser(Number(id)))?.pricing).toBe('operator');
  });
});
