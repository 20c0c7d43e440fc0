/**
 * What both engines' event ledgers share: the rollups' time key, when an idempotency key expires,
 * and retention. The batch writes themselves are engine-specific (`event-ledger-sqlite.ts`,
 * `event-ledger-postgres.ts`): each is the hot path of tracking, written for its engine.
 */
import { IDEMPOTENCY_WINDOW_MS } from '../domain/verdicts.js';
import type { ChargeRows, PriceRow } from './charge-rows.js';
import type { EventPartitions } from './event-partitions.js';
import type { TrackedEvent } from './rows.js';
import type { Db } from './schema.js';

/**
 * What a batch write did with each event: the events stored, in batch order, with their verdicts
 * (replays marked `duplicate`), and the positions in the batch of those refused and not stored
 * because their Idempotency-Key was already used for a different request (D9).
 */
export interface SettledBatch {
  stored: TrackedEvent[];
  refused: number[];
}

/**
 * A batch the serving index marked as charging nothing reached a campaign that charges per event (a
 * price set a moment ago, on another instance or by the CLI, not yet polled): the ledger stored
 * nothing, and the batch is to be taken again as one that settles money (`events.ts`).
 */
export class UnmarkedPrice extends Error {
  override readonly name = 'UnmarkedPrice';
}

/** A campaign a batch may cap or charge, as the batch reads it (`events.ts`). */
export interface SettlingRow {
  id: number;
  advertiser_id: number;
  status: string;
  time_zone: string;
  cap_impressions_total: number | null;
  cap_clicks_total: number | null;
  cap_impressions_daily: number | null;
  cap_clicks_daily: number | null;
  budget_total_micros: number | null;
  budget_daily_micros: number | null;
  /**
   * The campaign's price in force (its newest `campaign_prices` row, null if it never had one) where
   * the engine reads it with the campaign (SQLite); absent where `ChargeRows.latestPrices` reads it.
   */
  newest_price?: PriceRow | null;
}

/** Gives each settled event its cost (store/charges.ts `chargeEvents`), in batch order. */
export type Charge = (stored: readonly TrackedEvent[]) => TrackedEvent[];

/**
 * What an Idempotency-Key stands for: the request that claimed it, as validated and normalised
 * (kind, campaign, placement, country, device). The key is already per API key; the time is not
 * part of it, since a retry comes later by nature. A later request with the key and another
 * fingerprint is not a retry but a different event, which must not be taken for a duplicate.
 */
/**
 * How one engine writes a batch of events (idempotency claims, raw events, rollups). The store
 * picks one when it is opened (`context.ts`), with the engine's other traits (`engine-traits.ts`),
 * so nothing else branches on the engine.
 */
export interface EventLedger {
  /** Whether a batch with nothing to cap is one statement that commits by itself. */
  readonly commitsAlone: boolean;
  /**
   * Writes a batch. `charge`, when given, prices the events once replays are settled and before
   * anything is written (store/charges.ts): the events it returns, each with its `costMicros`, are
   * the ones stored and returned.
   */
  store(db: Db, events: readonly TrackedEvent[], charge: Charge | null): SettledBatch | Promise<SettledBatch>;
  /** The money rows a batch charging its events reads and adds to, in its transaction `db`. */
  chargeRows(db: Db): ChargeRows;
  /**
   * Of campaigns `ids`, those with a cap or a price per event, in id order, each with its price in
   * force, read inside the batch's transaction by the engine's own statement; null where the store's
   * query reads and locks them (PostgreSQL: `FOR UPDATE`). On SQLite a batch is the one writer, so
   * nothing needs locking.
   */
  readonly settlingCampaigns: ((ids: readonly number[]) => SettlingRow[]) | null;
  /** Deletes up to `limit` raw events older than `before` (retention); returns how many. */
  pruneEvents(db: Db, before: number, limit: number): Promise<number>;
  /**
   * Forgets up to `limit` idempotency keys past their 24 hours at `now` (retention); returns how
   * many. PostgreSQL finds them through their `created_at` index, SQLite under the marks of its
   * earlier passes (`idempotency-marks-sqlite.ts`).
   */
  pruneIdempotencyKeys(db: Db, now: number, limit: number): Promise<number>;
  /**
   * Sums what batches appended since the last fold into the tables it adds to, in the caller's
   * transaction: rollup rows into `event_rollups` (migration 024), what they charged into
   * `campaign_prices` and `partner_earnings` (migration 031); returns how many appended rows it folded. Null where
   * batches add to those tables themselves (PostgreSQL).
   */
  readonly foldAppended: {
    /** Whether anything is appended: read without a write lock, so an idle fold takes none. */
    pending(db: Db): boolean;
    fold(db: Db): number;
  } | null;
  /** The raw events' daily partitions, where the engine has them (PostgreSQL); else null. */
  readonly partitions: EventPartitioning | null;
}

/** Daily partitions of the raw events (`event-partitions.ts`): retention drops whole days. */
export interface EventPartitioning {
  /** Creates the missing days from the retention cutoff's through a week ahead; their names. */
  create(db: Db, now: number, retentionDays: number, lockTimeoutMs: number): Promise<string[]>;
  read(db: Db): Promise<EventPartitions>;
  /** Detaches and drops the days wholly older than `before`; their names. */
  drop(db: Db, before: number, lockTimeoutMs: number): Promise<string[]>;
}

export function requestFingerprint(event: TrackedEvent): string {
  return JSON.stringify([event.kind, event.campaignId, event.placement, event.country, event.device]);
}

/** The minute an instant falls in, as epoch milliseconds (the rollups' time key). */
export const minuteOf = (at: number): number => at - (at % 60_000);

/** The slot of `campaign_rollups` (migration 013): every UTC offset in use is a multiple of it. */
export const QUARTER_HOUR = 15 * 60_000;

/** The start of the quarter hour an instant falls in. */
export const quarterOf = (at: number): number => at - (at % QUARTER_HOUR);

/**
 * The `meta` key holding the instant (a quarter hour's start) before which `campaign_rollups` sums
 * every rollup. A batch adding to a rollup before it adds to `campaign_rollups` too.
 */
export const COMPACTED_BEFORE = 'rollups_compacted_before';

/**
 * Idempotency keys created at or before this instant no longer protect anything (D9): 24 hours
 * before the newest event of the batch. Both ledgers take over such a key instead of calling its
 * reuse a replay.
 */
export function idempotencyExpiry(events: readonly TrackedEvent[]): number {
  let newest = -Infinity;
  for (const event of events) if (event.occurredAt > newest) newest = event.occurredAt;
  return newest - IDEMPOTENCY_WINDOW_MS;
}

/**
 * The statement that deletes up to `limit` of the oldest raw events that occurred before `before`.
 * It picks them through the `occurred_at` index. Picked in id order, SQLite (which plans without
 * statistics) read the whole table to find that nothing was old enough yet, holding the server's
 * only thread for longer the more events it kept, at every retention pass; that was most of the
 * events benchmark's p99 (docs/benchmarks.md).
 */
export function pruneEventsQuery(db: Db, before: number, limit: number) {
  return db
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('events')
        .select('id')
        .where('occurred_at', '<', before)
        .orderBy('occurred_at')
        .limit(limit),
    );
}

/**
 * Deletes up to `limit` raw events that occurred before `before` (retention); rollups are kept.
 * Returns how many were deleted, so the caller can go on in small transactions.
 */
export async function pruneEvents(db: Db, before: number, limit: number): Promise<number> {
  const result = await pruneEventsQuery(db, before, limit).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * PostgreSQL's statement that forgets up to `limit` of the oldest (API key, Idempotency-Key) pairs
 * past the 24-hour window, picked through the `created_at` index and deleted by primary key.
 * Limited because every retention pass finds ten minutes' worth of keys, and one long statement
 * would hold their locks and a connection for seconds (`npm run bench:retention`). SQLite has no
 * such index any more (migration 032): `idempotency-marks-sqlite.ts`.
 */
export function pruneIdempotencyKeysQuery(db: Db, now: number, limit: number) {
  // Kysely's expression builder is meant to be destructured: its functions do not use `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  return db.deleteFrom('idempotency_keys').where(({ eb, refTuple, selectFrom }) =>
    eb(
      refTuple('api_key_id', 'key'),
      'in',
      selectFrom('idempotency_keys')
        .select(['api_key_id', 'key'])
        .where('created_at', '<=', now - IDEMPOTENCY_WINDOW_MS)
        .orderBy('created_at')
        .limit(limit)
        .$asTuple('api_key_id', 'key'),
    ),
  );
}

/** Forgets up to `limit` pairs past their window; returns how many, as `pruneEvents` does. */
export async function pruneIdempotencyKeys(db: Db, now: number, limit: number): Promise<number> {
  const result = await pruneIdempotencyKeysQuery(db, now, limit).executeTakeFirst();
  return Number(result.numDeletedRows);
}
