/**
 * Raw events on PostgreSQL are partitioned by UTC day (migration 016): `events_pYYYYMMDD` holds the
 * events that occurred on that day, `events_legacy` those stored before the migration (everything
 * before `meta.events_partitioned_from`). Days are created ahead of time and dropped whole once
 * expired, by whichever instance gets there first. SQLite has one table and none of this.
 */
import { sql } from 'kysely';
import type { Db } from './schema.js';

const DAY = 24 * 60 * 60 * 1000;

/** How many days after today every instance makes sure exist, at start and at every retention pass. */
export const PARTITION_DAYS_AHEAD = 7;

/** The `meta` key of the instant where daily partitions begin and the legacy partition ends. */
export const PARTITIONED_FROM = 'events_partitioned_from';

/** The partition holding the events stored before migration 016. */
export const LEGACY_PARTITION = 'events_legacy';

/** One advisory lock for every change to the partitions, so instances take turns. */
const PARTITIONS_LOCK = 0x706c6163_01;

/** The start (UTC midnight) of the day an instant falls in. */
export const dayOf = (at: number): number => at - (((at % DAY) + DAY) % DAY);

/** The name of the partition of the UTC day starting at `day`: `events_p20261125`. */
export function partitionName(day: number): string {
  return `events_p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

const DAILY = /^events_p(\d{4})(\d{2})(\d{2})$/;

export interface EventPartitions {
  /** Daily partitions by the start of their day. */
  days: Map<number, string>;
  /** Whether the legacy partition is still there. */
  legacy: boolean;
  /** Where daily partitions begin (null: the events are not partitioned). */
  partitionedFrom: number | null;
}

/** The partitions of `events` as they are now. */
export async function readEventPartitions(db: Db): Promise<EventPartitions> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass`.execute(db);
  const days = new Map<number, string>();
  for (const { name } of rows) {
    const match = DAILY.exec(name);
    if (match) days.set(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])), name);
  }
  const mark = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', PARTITIONED_FROM)
    .executeTakeFirst();
  return {
    days,
    legacy: rows.some((row) => row.name === LEGACY_PARTITION),
    partitionedFrom: mark === undefined ? null : Number(mark.value),
  };
}

/**
 * Takes the partitions' lock for the rest of the transaction. Waiting (`lockTimeoutMs` 0, at start:
 * the instance must not serve before its days exist), or else only if free, and then with DDL
 * waiting at most `lockTimeoutMs` for its table locks: creating or detaching a partition locks
 * `events` exclusively, and queued behind a long reader (a backup) it would hold up every insert.
 * Returns whether it holds the lock; when not, another instance is doing the same work.
 */
async function lockPartitions(db: Db, lockTimeoutMs: number): Promise<boolean> {
  if (lockTimeoutMs <= 0) {
    await sql`select pg_advisory_xact_lock(${PARTITIONS_LOCK})`.execute(db);
    return true;
  }
  const { rows } = await sql<{
    locked: boolean;
  }>`select pg_try_advisory_xact_lock(${PARTITIONS_LOCK}) as locked`.execute(db);
  if (rows[0]?.locked !== true) return false;
  await sql.raw(`set local lock_timeout = ${Math.round(lockTimeoutMs)}`).execute(db);
  return true;
}

/**
 * Creates the daily partitions missing from the day of the retention cutoff (or where daily
 * partitions begin, if later) through `PARTITION_DAYS_AHEAD` days after today; returns their names.
 * Run in a transaction. The first day is the one retention keeps last, so nothing created is
 * dropped at once, and any gap (every instance down for a week) is filled.
 */
export async function createEventPartitions(
  db: Db,
  now: number,
  retentionDays: number,
  lockTimeoutMs: number,
): Promise<string[]> {
  if (!(await lockPartitions(db, lockTimeoutMs))) return [];
  const { days, partitionedFrom } = await readEventPartitions(db);
  if (partitionedFrom === null) return [];
  const created: string[] = [];
  const last = dayOf(now) + PARTITION_DAYS_AHEAD * DAY;
  for (let day = Math.max(partitionedFrom, dayOf(now - retentionDays * DAY)); day <= last; day += DAY) {
    if (days.has(day)) continue;
    const name = partitionName(day);
    await sql
      .raw(
        `create table if not exists ${name} partition of events for values from (${day}) to (${day + DAY})`,
      )
      .execute(db);
    created.push(name);
  }
  return created;
}

/**
 * Detaches and drops every partition whose events all occurred before `before` (the daily ones
 * ending at or before it, the legacy one once `events_partitioned_from` is); returns their names.
 * The day straddling `before` is kept until it has wholly expired. Run in a transaction: a
 * detach and drop are catalog changes, whatever the partition holds.
 */
export async function dropEventPartitions(db: Db, before: number, lockTimeoutMs: number): Promise<string[]> {
  if (!(await lockPartitions(db, lockTimeoutMs))) return [];
  const { days, legacy, partitionedFrom } = await readEventPartitions(db);
  const expired = [...days]
    .filter(([day]) => day + DAY <= before)
    .sort(([a], [b]) => a - b)
    .map(([, name]) => name);
  if (legacy && partitionedFrom !== null && partitionedFrom <= before) expired.unshift(LEGACY_PARTITION);
  for (const name of expired) {
    await sql.raw(`alter table events detach partition ${name}`).execute(db);
    await sql.raw(`drop table ${name}`).execute(db);
  }
  return expired;
}

/**
 * Deletes up to `limit` of the legacy partition's events that occurred before `before`, oldest
 * first through its own index, as SQLite's retention does; returns how many (0 once it is gone).
 * Until it has wholly expired, this keeps an upgraded store's old events to the retention period.
 */
export async function pruneLegacyEvents(db: Db, before: number, limit: number): Promise<number> {
  const { rows } = await sql<{
    present: boolean;
  }>`select to_regclass(${LEGACY_PARTITION}) is not null as present`.execute(db);
  if (rows[0]?.present !== true) return 0;
  const result = await sql`delete from events_legacy where id in (select id from events_legacy
    where occurred_at < ${before} order by occurred_at limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
