import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { campaignInput } from './helpers/campaign-input.js';
import { trackedEvent } from './helpers/tracked-event.js';
import { RetentionJob } from '../src/jobs/retention-job.js';
import { connect } from '../src/store/connect.js';
import { dayOf, PARTITION_DAYS_AHEAD, partitionName } from '../src/store/event-partitions.js';
import { Store, type TrackedEvent } from '../src/store/store.js';
import { campaign, createTestApp } from './helpers/app.js';
import { createDatabase, type TestDatabase } from './helpers/engines.js';
import { withFreshStore } from './helpers/fresh-store.js';

const DAY = 24 * 60 * 60 * 1000;
const silent = pino({ level: 'silent' });

/**
 * Events stored by a release before migration 016 (its columns only: this release's ledger also
 * writes `event_at`, which migration 017 adds).
 */
async function storedBefore016(store: Store, events: TrackedEvent[]): Promise<void> {
  await store.db
    .insertInto('events')
    .values(
      events.map((e) => ({
        kind: e.kind,
        campaign_id: e.campaignId,
        placement_id: e.placement,
        country: e.country,
        device: e.device,
        partner_id: e.partnerId,
        api_key_id: e.apiKeyId,
        occurred_at: e.occurredAt,
        verdict: e.verdict,
        reason: e.reason,
        idempotency_key: e.idempotencyKey,
        user_address: e.userAddress,
      })),
    )
    .execute();
}

/**
 * An advertiser, a campaign and a partner's key on `store`, and events of theirs at a given time.
 * The advertiser, the campaign and the partner are written with the columns every release has had (the store may
 * be migrated only to 015: this release's own inserts write columns added since).
 */
async function eventsOf(store: Store) {
  const advertiser = await store.db
    .insertInto('advertisers')
    .values({ name: `Advertiser ${Math.random()}`, created_at: Date.now(), updated_at: Date.now() } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  const { title, destinationUrl, status, priority, weight } = campaignInput();
  const created = await store.db
    .insertInto('campaigns')
    .values({
      advertiser_id: advertiser.id,
      title,
      description: null,
      category: null,
      destination_url: destinationUrl,
      status,
      priority,
      weight,
      countries: '[]',
      devices: '[]',
      start_at: null,
      end_at: null,
      created_at: Date.now(),
      updated_at: Date.now(),
    } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  const campaignId = Number(created.id);
  await store.db
    .insertInto('campaign_placements')
    .values({ campaign_id: campaignId, placement_id: 'header_banner' })
    .execute();
  const partner = await store.db
    .insertInto('partners')
    .values({ name: `Partner ${Math.random()}`, created_at: Date.now(), updated_at: Date.now() } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
  const partnerId = Number(partner.id);
  const key = await store.createApiKey({
    partnerId,
    label: null,
    displayPrefix: 'p',
    digest: `d${Math.random()}`,
  });
  return (occurredAt: number): TrackedEvent =>
    trackedEvent({ partnerId, apiKeyId: key.id, campaignId, occurredAt });
}

/** The partitions of `events`, by name, sorted. */
async function partitions(store: Store): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass order by 1`.execute(
    store.db,
  );
  return rows.map((row) => row.name);
}

/** Where the daily partitions begin (migration 016). */
async function partitionedFrom(store: Store): Promise<number> {
  const from = (await store.eventPartitions())?.partitionedFrom ?? null;
  if (from === null) throw new Error('events are not partitioned');
  return from;
}

async function rollupTotal(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('event_rollups_live')
    .select((eb) => eb.fn.sum<string>('count').as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const days = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => partitionName(from + i * DAY));

describe('raw events in daily partitions on postgres', () => {
  let database: TestDatabase;
  const stores: Store[] = [];
  const open = async (until?: string) => {
    const store = new Store(connect(database.url));
    stores.push(store);
    await store.migrate(until);
    return store;
  };
  beforeAll(async () => {
    database = await createDatabase('postgres');
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('migration 016 keeps the existing events in a legacy partition, and ids go on', async () => {
    const before = await open('015-pacing');
    const event = await eventsOf(before);
    const now = Date.now();
    await storedBefore016(before, [event(now - 3 * DAY), event(now - DAY), event(now)]);
    const { rows: old } = await sql<{ id: string }>`select id from events order by id`.execute(before.db);
    await before.close();
    stores.splice(0);

    const store = await open();
    expect(await partitions(store)).toEqual(['events_legacy']);
    const { rows: kept } = await sql<{ id: string }>`select id from events order by id`.execute(store.db);
    expect(kept).toEqual(old);
    // Everything up to the next UTC midnight goes to the legacy partition; inserts are unchanged.
    await store.insertEvents([event(now)]);
    const { rows } = await sql<{
      id: string;
      partition: string;
    }>`select id, tableoid::regclass::text as partition
      from events order by id`.execute(store.db);
    expect(rows).toHaveLength(4);
    expect(Number(rows[3].id)).toBe(Number(old[2].id) + 1);
    expect(rows[3].partition).toBe('events_legacy');
    expect(await partitionedFrom(store)).toBe(dayOf(now) + DAY);
  });

  it('creates the days from the retention cutoff through a week ahead, and inserts cross midnight', async () => {
    const store = await open();
    const event = await eventsOf(store);
    const from = dayOf(Date.now()) + DAY;
    const now = from + 10 * DAY + 23.5 * 60 * 60 * 1000;
    const created = await store.ensureEventPartitions(now, 3);
    const first = dayOf(now - 3 * DAY);
    expect(created).toEqual(days(first, 3 + 1 + PARTITION_DAYS_AHEAD));
    expect(await partitions(store)).toEqual(['events_legacy', ...created].sort());
    expect(await store.ensureEventPartitions(now, 3)).toEqual([]);

    const midnight = dayOf(now) + DAY;
    await store.insertEvents([event(midnight - 1), event(midnight), event(midnight + 1)]);
    const { rows } = await sql<{ partition: string }>`select tableoid::regclass::text as partition from events
      where occurred_at between ${midnight - 1} and ${midnight + 1} order by occurred_at`.execute(store.db);
    expect(rows.map((row) => row.partition)).toEqual([
      partitionName(dayOf(now)),
      partitionName(midnight),
      partitionName(midnight),
    ]);
  });

  it('fails the whole batch, storing none of it, when an event has no partition', async () => {
    const store = await open();
    const event = await eventsOf(store);
    const far = dayOf(Date.now()) + 400 * DAY;
    const count = async () => Number((await store.countEvents({})) ?? 0);
    const stored = await count();
    await expect(store.insertEvents([event(Date.now()), event(far)])).rejects.toThrow(/no partition/);
    expect(await count()).toBe(stored);
  });

  it('answers a partner 503, storing nothing, while the day has no partition; the retry is stored once it has', async () => {
    // The server's clock is past every partition: events are stamped with it when they arrive.
    const later = Date.now() + 400 * DAY;
    const app = await createTestApp({ engine: 'postgres', clock: () => later });
    try {
      const [id] = await app.addCampaigns([campaign()]);
      const event = { campaignId: id, placement: 'header_banner' };
      const key = { 'idempotency-key': 'no-partition-1' };
      expect((await app.track('impression', event, key)).statusCode).toBe(503);
      expect(await app.store.countEvents({})).toBe(0);
      expect(await app.store.ensureEventPartitions(later, 1)).toContain(partitionName(dayOf(later)));
      expect((await app.track('impression', event, key)).statusCode).toBe(200);
      const rows = await app.store.db.selectFrom('events').select(['verdict', 'occurred_at']).execute();
      expect(rows).toEqual([{ verdict: 'counted', occurred_at: later }]);
    } finally {
      await app.close();
    }
  });

  it('lets any number of instances create the partitions at once', async () => {
    const many = await Promise.all([open(), open(), open(), open()]);
    const base = dayOf(Date.now()) + 100 * DAY;
    for (let round = 0; round < 5; round++) {
      const now = base + round * 3 * DAY;
      // Waiting (at start) and not waiting (a retention pass), all at once.
      const results = await Promise.all(
        many.flatMap((store) => [
          store.ensureEventPartitions(now, 2),
          store.ensureEventPartitions(now, 2, 500),
        ]),
      );
      const created = results.flat();
      expect(new Set(created).size).toBe(created.length);
      const names = await partitions(many[0]);
      for (const name of days(dayOf(now) - 2 * DAY, 3 + PARTITION_DAYS_AHEAD)) expect(names).toContain(name);
    }
  });

  it('retention drops exactly the partitions wholly expired, legacy included, and keeps the rest', async () => {
    const store = await open();
    const event = await eventsOf(store);
    const from = await partitionedFrom(store);
    // Retention of 2 days, 5 days and a half after partitioning began.
    const now = from + 5 * DAY + 12 * 60 * 60 * 1000;
    await store.ensureEventPartitions(from, 2);
    await store.ensureEventPartitions(now, 2);
    await store.insertEvents([0, 1, 2, 3, 4, 5].map((day) => event(from + day * DAY + 1000)));
    const legacyRows = Number(
      (await sql<{ n: string }>`select count(*) as n from events_legacy`.execute(store.db)).rows[0].n,
    );
    expect(legacyRows).toBeGreaterThan(0);
    const all = await partitions(store);
    const rollupsBefore = await rollupTotal(store);

    const job = new RetentionJob(store, silent, 2, () => now);
    const pass = await job.runOnce();
    // The cutoff is 3.5 days after `from`: days 0 to 2 have wholly expired, day 3 straddles it.
    const expired = ['events_legacy', ...days(from, 3)];
    expect(pass.dropped).toEqual(expired);
    expect(pass.events).toBe(0);
    expect(await partitions(store)).toEqual(all.filter((name) => !expired.includes(name)));
    const { rows } = await sql<{ occurred_at: string }>`select occurred_at from events
      where occurred_at >= ${from} and occurred_at < ${from + 6 * DAY} order by 1`.execute(store.db);
    expect(rows.map((row) => Number(row.occurred_at))).toEqual(
      [3, 4, 5].map((day) => from + day * DAY + 1000),
    );
    // Nothing more to do in the next pass; rollups are never pruned.
    expect((await job.runOnce()).dropped).toEqual([]);
    expect(await rollupTotal(store)).toBe(rollupsBefore);
  });

  it('prunes the legacy partition in chunks until it has wholly expired', async () => {
    const fresh = await createDatabase('postgres');
    try {
      const before = new Store(connect(fresh.url));
      await before.migrate('015-pacing');
      const event = await eventsOf(before);
      const now = Date.now();
      await storedBefore016(before, [event(now - 10 * DAY), event(now - 5 * DAY), event(now - DAY)]);
      await before.close();
      const store = new Store(connect(fresh.url));
      stores.push(store);
      await store.migrate();
      const pass = await new RetentionJob(store, silent, 3, () => now).runOnce();
      expect(pass).toMatchObject({ events: 2, dropped: [] });
      expect(await partitions(store)).toContain('events_legacy');
      await store.close();
    } finally {
      await fresh.drop();
    }
  });
});

describe('raw events on sqlite', () => {
  it('stay in one table, pruned in chunks', async () => {
    await withFreshStore('sqlite', async (store) => {
      const event = await eventsOf(store);
      const now = Date.now();
      expect(await store.ensureEventPartitions(now, 1)).toEqual([]);
      await store.insertEvents([event(now - 3 * DAY), event(now)]);
      const pass = await new RetentionJob(store, silent, 1, () => now).runOnce();
      expect(pass).toEqual({ events: 1, idempotencyKeys: 0, dropped: [], created: [] });
    });
  });
});
