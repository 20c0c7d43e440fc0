import { IDEMPOTENCY_WINDOW_MS, REASONS } from '../domain/verdicts.js';
import type { OnConflictBuilder } from 'kysely';
import type { Engine } from './connect.js';
import type { Database, EventRollupTable } from './schema.js';
import type { Db, TrackedEvent } from './store.js';

/** The dimensions of one rollup row (its primary key). */
type RollupKey = Omit<EventRollupTable, 'count'>;

/** The minute an instant falls in, as epoch milliseconds (the rollups' time key). */
export const minuteOf = (at: number): number => at - (at % 60_000);

/**
 * Settles idempotent replays inside the batch's transaction (D9): the first event of each
 * (API key, Idempotency-Key) pair in 24 hours is kept as it is; every later one, in this batch, an
 * earlier batch, on another instance or before a restart, becomes a `duplicate`. The pair's primary
 * key decides races between instances: whoever inserts it first owns it.
 */
export async function settleIdempotency(db: Db, events: readonly TrackedEvent[]): Promise<TrackedEvent[]> {
  const firstInBatch = new Map<string, TrackedEvent>();
  for (const event of events) {
    if (event.idempotencyKey === null) continue;
    const pair = `${event.apiKeyId} ${event.idempotencyKey}`;
    if (!firstInBatch.has(pair)) firstInBatch.set(pair, event);
  }
  if (firstInBatch.size === 0) return [...events];

  // Sorted, so concurrent batches lock key rows in one order and wait rather than deadlock.
  const candidates = [...firstInBatch.values()].sort(
    (a, b) =>
      a.apiKeyId - b.apiKeyId || ((a.idempotencyKey as string) < (b.idempotencyKey as string) ? -1 : 1),
  );
  const now = Math.max(...candidates.map((event) => event.occurredAt));
  // One statement: a new pair is inserted; a pair older than the window is taken over (it no
  // longer protects anything); a live pair is left alone and so not returned.
  const inserted = await db
    .insertInto('idempotency_keys')
    .values(
      candidates.map((event) => ({
        api_key_id: event.apiKeyId,
        key: event.idempotencyKey as string,
        created_at: event.occurredAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['api_key_id', 'key'])
        .doUpdateSet((eb) => ({ created_at: eb.ref('excluded.created_at') }))
        .where('idempotency_keys.created_at', '<=', now - IDEMPOTENCY_WINDOW_MS),
    )
    .returning(['api_key_id', 'key'])
    .execute();
  const owned = new Set(inserted.map((row) => `${Number(row.api_key_id)} ${row.key}`));

  return events.map((event) => {
    if (event.idempotencyKey === null) return event;
    const pair = `${event.apiKeyId} ${event.idempotencyKey}`;
    if (firstInBatch.get(pair) === event && owned.has(pair)) return event;
    return { ...event, verdict: 'duplicate', reason: REASONS.idempotentReplay };
  });
}

const eventRow = (event: TrackedEvent) => ({
  kind: event.kind,
  campaign_id: event.campaignId,
  placement_id: event.placement,
  country: event.country,
  device: event.device,
  partner_id: event.partnerId,
  api_key_id: event.apiKeyId,
  occurred_at: event.occurredAt,
  verdict: event.verdict,
  reason: event.reason,
  idempotency_key: event.idempotencyKey,
});

/** A batch summed into rollup rows, in key order (so concurrent batches lock rows in one order). */
function rollupRows(events: readonly TrackedEvent[]): EventRollupTable[] {
  const counts = new Map<string, { row: RollupKey; count: number }>();
  for (const event of events) {
    const row: RollupKey = {
      minute: minuteOf(event.occurredAt),
      campaign_id: event.campaignId,
      partner_id: event.partnerId,
      placement_id: event.placement,
      country: event.country ?? '',
      device: event.device ?? '',
      kind: event.kind,
      verdict: event.verdict,
    };
    const key = Object.values(row).join('\u0000');
    const entry = counts.get(key);
    if (entry) entry.count++;
    else counts.set(key, { row, count: 1 });
  }
  return [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, { row, count }]) => ({ ...row, count }));
}

const ROLLUP_KEY = [
  'minute',
  'campaign_id',
  'partner_id',
  'placement_id',
  'country',
  'device',
  'kind',
  'verdict',
] as const;

/**
 * Writes a batch's raw events and adds them to the per-minute rollups, in the batch's transaction,
 * so a report includes an event from the moment its request is answered. On PostgreSQL both go in
 * one statement (a data-modifying CTE): one round trip less for every batch.
 */
export async function storeEvents(db: Db, engine: Engine, events: readonly TrackedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map(eventRow);
  const rollups = rollupRows(events);
  const addCounts = (oc: OnConflictBuilder<Database, 'event_rollups'>) =>
    oc
      .columns(ROLLUP_KEY)
      .doUpdateSet((eb) => ({ count: eb('event_rollups.count', '+', eb.ref('excluded.count')) }));
  if (engine === 'postgres') {
    await db
      .with('stored', (cte) => cte.insertInto('events').values(rows).returning('id'))
      .insertInto('event_rollups')
      .values(rollups)
      .onConflict(addCounts)
      .execute();
    return;
  }
  await db.insertInto('events').values(rows).execute();
  await db.insertInto('event_rollups').values(rollups).onConflict(addCounts).execute();
}

/**
 * Deletes up to `limit` raw events that occurred before `before` (retention); rollups are kept.
 * Returns how many were deleted, so the caller can go on in small transactions.
 */
export async function pruneEvents(db: Db, before: number, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb.selectFrom('events').select('id').where('occurred_at', '<', before).orderBy('id').limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Forgets (API key, Idempotency-Key) pairs older than the 24-hour window. */
export async function pruneIdempotencyKeys(db: Db, now: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', now - IDEMPOTENCY_WINDOW_MS)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
