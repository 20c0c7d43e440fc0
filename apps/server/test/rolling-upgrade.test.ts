import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';

/**
 * A rolling upgrade: a newer version starts on the shared store and migrates it while older
 * instances still serve, and one of those may restart before it is replaced. An older version then
 * starts on a store that is ahead of it, without migrating, because a release's migrations only
 * add what the previous release can ignore (expand, then contract a release later).
 */
describe.each(ENGINES)('an older version on a store a newer one migrated, on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await createDatabase(engine);
    const newer = await database.open();
    // What a newer release's expanding migration does: a column this version never reads.
    await sql`alter table placements add column future_note text`.execute(newer.db);
    await sql`insert into kysely_migration (name, timestamp) values ('999-future', ${new Date().toISOString()})`.execute(
      newer.db,
    );
    await newer.close();
    store = await database.open();
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('starts without migrating and names the newer migrations', async () => {
    const report = await store.migrate();
    expect(report).toEqual({ applied: [], pending: [], ahead: ['999-future'] });
    expect(await store.pendingMigrations()).toEqual([]);
  });

  it('serves on it: reads and writes as before', async () => {
    expect(await store.listPlacements()).toHaveLength(15);
    const partner = await store.createPartner('Upgrade Partner');
    expect(partner.name).toBe('Upgrade Partner');
  });

  it('refuses a store with one of its own migrations missing below the newer ones', async () => {
    const other = await database.open();
    try {
      await sql`delete from kysely_migration where name = '015-pacing'`.execute(other.db);
      await expect(other.migrate()).rejects.toThrow(/999-future/);
    } finally {
      await other.close();
    }
  });
});
