import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** A UTC day in milliseconds, and the `meta` key of where daily partitions begin (a migration keeps its own copy). */
const DAY = 24 * 60 * 60 * 1000;
const PARTITIONED_FROM = 'events_partitioned_from';

/**
 * Raw events on PostgreSQL in one partition per UTC day (declarative partitioning by range of
 * `occurred_at`), so retention drops a whole day in constant time instead of deleting its rows
 * (store/event-partitions.ts creates the days ahead and drops the expired ones). SQLite keeps one
 * table and its chunked deletes: this migration does nothing there.
 *
 * - The existing table becomes the partition `events_legacy`, covering everything before the first
 *   UTC midnight after both now and its newest event, rather than being copied: a copy would
 *   rewrite every row and index of a table that may hold 90 days of traffic, while attaching only
 *   reads it once. ATTACH proves the range by scanning it under this migration's lock; a check
 *   constraint added first would need the same scan in the same transaction, so none is added.
 *   Its primary key on id is rebuilt on (id, occurred_at), the partitioned table's (a partition has
 *   no other), which retention's chunked deletes use until the partition has wholly expired.
 * - A partitioned table's primary key must hold the partition key: (id, occurred_at). Ids come from
 *   the same sequence, now owned by the new table (dropping the legacy partition would otherwise
 *   drop the sequence with it), so inserts are unchanged and ids go on where they were.
 * - The foreign keys to campaigns and API keys and the index on `occurred_at` are declared on the
 *   partitioned table, so every partition has them; the legacy table's own are matched and reused.
 * - No DEFAULT partition: a default partition holding a row of a day not yet created would make
 *   creating that day fail, creating any day would scan it, and it rules out DETACH CONCURRENTLY.
 *   An event with no partition for its time fails its batch instead, which nothing acknowledges
 *   (the partner gets 503 and retries); every instance creates the coming days before it serves.
 * - `meta.events_partitioned_from` records where the daily partitions begin.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  if (engine !== 'postgres') return;
  const { rows } = await sql<{
    newest: string | null;
  }>`select max(occurred_at) as newest from events`.execute(db);
  const newest = rows[0]?.newest === null || rows[0]?.newest === undefined ? 0 : Number(rows[0].newest);
  const after = Math.max(Date.now(), newest + 1);
  const bound = after - (after % DAY) + DAY;

  await sql`alter table events rename to events_legacy`.execute(db);
  // A partition may have one primary key, the partitioned table's: its index is built here.
  await sql`alter table events_legacy drop constraint events_pkey`.execute(db);
  await sql`alter table events_legacy add constraint events_legacy_pkey primary key (id, occurred_at)`.execute(
    db,
  );
  await sql`alter index events_occurred rename to events_legacy_occurred`.execute(db);
  await sql`alter table events_legacy alter column id drop default`.execute(db);
  await sql`create table events (
      id bigint not null default nextval('events_id_seq'),
      kind text not null,
      campaign_id bigint not null references campaigns (id),
      placement_id text not null,
      country text,
      device text,
      partner_id bigint not null,
      api_key_id bigint not null references api_keys (id),
      occurred_at bigint not null,
      verdict text not null,
      reason text,
      idempotency_key text,
      user_address text,
      primary key (id, occurred_at)
    ) partition by range (occurred_at)`.execute(db);
  await sql`alter sequence events_id_seq owned by events.id`.execute(db);
  await sql`create index events_occurred on events (occurred_at)`.execute(db);
  await sql
    .raw(`alter table events attach partition events_legacy for values from (minvalue) to (${bound})`)
    .execute(db);
  await db
    .insertInto('meta')
    .values({ key: PARTITIONED_FROM, value: String(bound) })
    .execute();
}
