import { sql } from 'kysely';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ENGINE_TRAITS } from '../src/store/engine-traits.js';
import type { Db } from '../src/store/schema.js';
import type { Store, TrackedEvent } from '../src/store/store.js';
import { wireServices } from '../src/wiring.js';
import { campaignInput } from './helpers/campaign-input.js';
import { eachBlockStore, ENGINES, type TestDatabase } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { trackedEvent } from './helpers/tracked-event.js';

/**
 * The engine traits (`store/engine-traits.ts`): what each engine does for each, and the guarantee
 * each lock gives on either engine, a write or a locking read from elsewhere waiting until the
 * transaction that locked ends. PostgreSQL runs the contender on another connection of its pool and
 * shows it waiting on a lock; SQLite's store has one connection, which the transaction holds.
 */
describe.each(ENGINES)('engine traits on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  eachBlockStore(engine, (opened) => ({ database, store } = opened));

  /** Whether a statement of this database waits on a lock (PostgreSQL's own view of its sessions). */
  async function someoneWaitsOnALock(db: Db): Promise<boolean> {
    const { rows } = await sql<{ waiting: number }>`select count(*) as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    return Number(rows[0]?.waiting ?? 0) > 0;
  }

  /**
   * Runs `hold` in a transaction, then `contender` from outside it, and requires the contender to
   * finish only once the transaction has committed; returns what the contender returned.
   */
  async function heldOff<T>(hold: (tx: Store) => Promise<void>, contender: () => Promise<T>): Promise<T> {
    let finished = false;
    let running: Promise<T> | undefined;
    await store.transaction(async (tx) => {
      await hold(tx);
      running = contender().finally(() => (finished = true));
      if (engine === 'postgres') {
        await eventually(
          async () => finished || (await someoneWaitsOnALock(store.db)),
          'the contender waiting on a lock or finished',
        );
      } else {
        // Each SQLite statement runs synchronously in one turn of the event loop: a contender not
        // held off would have finished after a few turns.
        await turns();
      }
      expect(finished, 'the contender finished while the lock was held').toBe(false);
    });
    return running!;
  }

  /** A counted impression of a new campaign, partner and key, named `name`, that the store takes. */
  async function storableEvent(name: string): Promise<TrackedEvent> {
    const { campaignIds } = await store.importCampaigns(
      [{ name: `Traits ${name}`, campaigns: [campaignInput({ name })] }],
      Date.now(),
    );
    const partner = await store.createPartner(`Traits ${name}`);
    const key = await store.createApiKey({
      partnerId: partner.id,
      label: null,
      displayPrefix: 'p',
      digest: `traits-${name}`,
    });
    return trackedEvent({
      campaignId: campaignIds[0],
      partnerId: partner.id,
      apiKeyId: key.id,
      occurredAt: Date.now(),
    });
  }

  /** Lets the event loop turn a few times: what was ready to run (a timer of 0, I/O done) has. */
  async function turns(count = 20): Promise<void> {
    for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  }

  it('commitConcurrency: each engine its own', () => {
    expect(store.traits).toBe(ENGINE_TRAITS[engine]);
    expect(store.traits.commitConcurrency).toBe(engine === 'postgres' ? 4 : 1);
  });

  it('commitConcurrency: the wiring commits that many batches at once, and no more', async () => {
    const event = await storableEvent('concurrency');
    const wired = await database.open();
    const insert = wired.insertEvents;
    let inFlight = 0;
    let most = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    Object.assign(wired, {
      insertEvents: async (events: readonly TrackedEvent[]) => {
        most = Math.max(most, (inFlight += 1));
        await gate;
        inFlight -= 1;
        return insert(events);
      },
    });
    const { events: sink } = wireServices(wired, pino({ level: 'silent' }), {
      refreshIntervalMs: 60_000,
      accessLog: false,
      eventRetentionDays: 90,
    });
    const { commitConcurrency } = wired.traits;
    const recorded: Array<Promise<unknown>> = [];
    // One event at a time, each its own batch: the next is recorded once the last is committing.
    for (let batch = 1; batch <= commitConcurrency; batch += 1) {
      recorded.push(sink.record(event));
      await eventually(() => inFlight === batch, `batch ${batch} committing`);
    }
    recorded.push(sink.record(event));
    await turns();
    expect({ inFlight, most }).toEqual({ inFlight: commitConcurrency, most: commitConcurrency });
    open();
    expect(await Promise.all(recorded)).toHaveLength(commitConcurrency + 1);
    await sink.close();
    await wired.close();
  });

  it('lockRows: a second revocation counts the admin tokens left only once the first has committed', async () => {
    const now = Date.now();
    const made = await Promise.all(
      ['a', 'b'].map((name) =>
        store.createAdminToken({ digest: `traits-${name}`, displayPrefix: name, label: name }, now),
      ),
    );
    const before = await store.countAdminTokens(now);
    const left = await heldOff(
      async (tx) => {
        expect(await tx.countAdminTokens(now, { lock: true })).toBe(before);
        await tx.updateAdminToken(made[0].id, { revokedAt: now });
      },
      () => store.transaction((tx) => tx.countAdminTokens(now, { lock: true })),
    );
    expect(left).toBe(before - 1);
  });

  it('lockRows: what the engine adds to a query', () => {
    const query = store.db.selectFrom('admin_tokens').select('id');
    const locked = store.traits.lockRows(query).compile().sql;
    if (engine === 'postgres') expect(locked).toBe(`${query.compile().sql} for update`);
    else expect(locked).toBe(query.compile().sql);
  });

  it('lockAgainstWrites: a batch adding to the rollups commits only once the locking transaction has', async () => {
    const event = await storableEvent('rollups');
    const rollups = (db: Db) =>
      db
        .selectFrom('event_rollups_live')
        .select((eb) => eb.fn.sum<number>('count').as('count'))
        .where('campaign_id', '=', event.campaignId)
        .executeTakeFirstOrThrow();
    let seenInside: unknown;
    await heldOff(
      async (tx) => {
        await tx.traits.lockAgainstWrites(tx.db, 'event_rollups');
        seenInside = (await rollups(tx.db)).count;
      },
      () => store.insertEvents([event]),
    );
    expect(seenInside ?? null).toBe(null);
    expect(Number((await rollups(store.db)).count)).toBe(1);
  });

  it('hasTable: finds a table of the store and not one it lacks', async () => {
    expect(await store.traits.hasTable(store.db, 'campaigns')).toBe(true);
    expect(await store.traits.hasTable(store.db, 'no_such_table')).toBe(false);
  });
});
