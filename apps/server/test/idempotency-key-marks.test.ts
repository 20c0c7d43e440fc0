import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store, TrackedEvent } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { migratingStore } from './helpers/migrating-store.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const T0 = Date.parse('2026-06-01T12:00:00Z');

/** The keys still held, in rowid order (the order retention reads them in). */
async function keysOf(store: Store): Promise<string[]> {
  const rows = await sql<{ key: string }>`select key from idempotency_keys order by rowid`.execute(store.db);
  return rows.rows.map((row) => row.key);
}

/**
 * SQLite forgets idempotency keys without an index on their time (migration 032,
 * store/idempotency-marks-sqlite.ts): a pass deletes the expired keys under the newest mark an
 * earlier pass left at least 24 hours before, and never a key still inside its 24 hours.
 */
describe('idempotency keys forgotten under the marks of earlier passes, on sqlite', () => {
  const stores = migratingStore();

  async function newStore() {
    await stores.create('sqlite');
    const store = await stores.open();
    const { campaignIds } = await store.importCampaigns([{ name: 'marks', campaigns: [campaignInput()] }]);
    const source = await newPartnerKey(store, 'marks partner', 'd-marks');
    const event = (key: string, occurredAt: number): TrackedEvent =>
      trackedEvent({ campaignId: campaignIds[0], ...source, occurredAt, idempotencyKey: key });
    return { store, event };
  }

  it('forgets a key at the first pass 24 hours after one that saw it, and a live one never', async () => {
    const { store, event } = await newStore();
    await store.insertEvents([event('a1', T0), event('a2', T0), event('a3', T0)]);
    // No mark yet: nothing is known to be old enough. The pass leaves one over a1-a3.
    expect(await store.pruneIdempotencyKeys(T0 + 1 * MINUTE, 250)).toBe(0);
    await store.insertEvents([event('b1', T0 + 2 * MINUTE), event('b2', T0 + 2 * MINUTE)]);
    // 24 hours after a1-a3 were created, but not yet after the pass that marked them.
    expect(await store.pruneIdempotencyKeys(T0 + DAY + MINUTE / 2, 250)).toBe(0);
    expect(await store.pruneIdempotencyKeys(T0 + DAY + MINUTE, 250)).toBe(3);
    expect(await keysOf(store)).toEqual(['b1', 'b2']);

    // b1 is reused after its 24 hours: taken over as a new key, it moves past b2 in rowid order.
    const reused = await store.insertEvents([event('b1', T0 + DAY + 5 * MINUTE)]);
    expect(reused.replayed).toEqual([]);
    expect(await keysOf(store)).toEqual(['b2', 'b1']);

    // A day later b2 has expired and goes; b1, taken over 23 h 56 min before, stays, so its
    // retry is still a duplicate.
    expect(await store.pruneIdempotencyKeys(T0 + 2 * DAY + MINUTE, 250)).toBe(1);
    expect(await keysOf(store)).toEqual(['b1']);
    const retry = await store.insertEvents([event('b1', T0 + 2 * DAY + MINUTE)]);
    expect(retry.replayed).toEqual([0]);
  });

  it('keeps a key under a mark whose own time is inside its 24 hours', async () => {
    const { store, event } = await newStore();
    await store.insertEvents([event('old', T0)]);
    // Taken over by a release before marks, which left it in place: under the mark, but live.
    await sql`insert into idempotency_keys (api_key_id, key, created_at)
      select api_key_id, 'misplaced', ${T0 + DAY} from idempotency_keys`.execute(store.db);
    await sql`update idempotency_keys set rowid = 0 where key = 'misplaced'`.execute(store.db);
    expect(await store.pruneIdempotencyKeys(T0 + MINUTE, 250)).toBe(0);
    expect(await store.pruneIdempotencyKeys(T0 + DAY + MINUTE, 250)).toBe(1);
    expect(await keysOf(store)).toEqual(['misplaced']);
  });

  it('deletes in chunks, and a chunk that deletes fewer ends the pass with its mark', async () => {
    const { store, event } = await newStore();
    await store.insertEvents(Array.from({ length: 5 }, (_, i) => event(`k${i}`, T0)));
    await store.pruneIdempotencyKeys(T0 + MINUTE, 2);
    const marks = () =>
      sql<{ at: number }>`select at from idempotency_key_marks order by at`.execute(store.db);
    expect((await marks()).rows.map((row) => Number(row.at))).toEqual([T0 + MINUTE]);
    const pass = T0 + DAY + 2 * MINUTE;
    expect(await store.pruneIdempotencyKeys(pass, 2)).toBe(2);
    expect(await store.pruneIdempotencyKeys(pass, 2)).toBe(2);
    expect((await marks()).rows).toHaveLength(1);
    expect(await store.pruneIdempotencyKeys(pass, 2)).toBe(1);
    // The pass's own mark; the one it used stays until a newer one is old enough.
    expect((await marks()).rows.map((row) => Number(row.at))).toEqual([T0 + MINUTE, pass]);
    expect(await keysOf(store)).toEqual([]);
    // A day later the pass's mark is the one in use, and the older one is forgotten.
    expect(await store.pruneIdempotencyKeys(pass + DAY, 2)).toBe(0);
    expect((await marks()).rows.map((row) => Number(row.at))).toEqual([pass, pass + DAY]);
  });

  it('marks the keys a store held before migration 032, so each is forgotten once its mark is a day old', async () => {
    await stores.create('sqlite');
    const before = await stores.open('031-charges-in-rollup-deltas');
    // Six keys five minutes apart, in arrival order, and one that arrived last but happened first.
    const times = [0, 5, 10, 15, 20, 25, -3].map((m) => T0 + m * MINUTE);
    for (const [i, at] of times.entries())
      await sql`insert into idempotency_keys (api_key_id, key, created_at) values (1, ${`k${i}`}, ${at})`.execute(
        before.db,
      );
    const after = await stores.reopen();
    const marks = await sql<{ at: number; last_rowid: number }>`
      select at, last_rowid from idempotency_key_marks order by at`.execute(after.db);
    // The newest time so far, by ten minutes of it: 0-5, 10-15, 20-25 (the last key's 25 too).
    expect(marks.rows.map((row) => [Number(row.at) - T0, Number(row.last_rowid)])).toEqual([
      [5 * MINUTE, 2],
      [15 * MINUTE, 4],
      [25 * MINUTE, 7],
    ]);
    const indexes = await sql<{ name: string }>`
      select name from sqlite_master where tbl_name = 'idempotency_keys' and type = 'index'`.execute(
      after.db,
    );
    expect(indexes.rows.map((row) => row.name)).not.toContain('idempotency_keys_created');

    expect(await after.pruneIdempotencyKeys(T0 + DAY + 16 * MINUTE, 250)).toBe(4);
    expect(await keysOf(after)).toEqual(['k4', 'k5', 'k6']);
    expect(await after.pruneIdempotencyKeys(T0 + DAY + 26 * MINUTE, 250)).toBe(3);
  });
});
