import type BetterSqlite3 from 'better-sqlite3';
import { addMicros, micros, type Micros } from '../domain/money.js';
import { PER_EVENT_PRICE_MODELS } from '../domain/prices.js';
import { REASONS } from '../domain/verdicts.js';
import {
  COMPACTED_BEFORE,
  idempotencyExpiry,
  minuteOf,
  pruneEvents,
  quarterOf,
  requestFingerprint,
  type Charge,
  type EventLedger,
  type SettledBatch,
  type SettlingRow,
} from './event-ledger.js';
import {
  appendingRollups,
  foldChargesSqlite,
  sqliteChargeRows,
  unfoldedUnits,
} from './charge-rows-sqlite.js';
import { pruneIdempotencyKeysSqlite } from './idempotency-marks-sqlite.js';
import { settledAs, type TrackedEvent } from './rows.js';

/**
 * A key past its window is taken over, and moves to the table's next rowid, where a new key would
 * be: rowids follow arrival, which is how retention finds expired keys (`idempotency-marks-sqlite.ts`).
 */
const CLAIM = `insert into idempotency_keys (api_key_id, key, created_at, fingerprint) values (?, ?, ?, ?)
  on conflict (api_key_id, key) do update set created_at = excluded.created_at,
    fingerprint = excluded.fingerprint, rowid = (select max(rowid) + 1 from idempotency_keys)
  where idempotency_keys.created_at <= ?
  returning 1`;

/** The request a live key stands for, read only when an event did not claim its key. */
const HELD = `select fingerprint from idempotency_keys where api_key_id = ? and key = ?`;

const INSERT_EVENT = `insert into events (kind, campaign_id, placement_id, country, device, partner_id,
  api_key_id, occurred_at, verdict, reason, idempotency_key, user_address, event_at, cost_micros,
  earnings_micros) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * A batch's rollup rows, appended (migration 024): a batch's rows are adjacent, where adding to
 * `event_rollups` itself rewrote a page of the minute's rows for nearly every event. Each carries
 * the price its events were charged at and the share they earned under (migration 031), which the
 * fold adds to the money rows: a batch writes no row of its own for what it charged.
 */
const APPEND_ROLLUP = `insert into event_rollup_deltas (minute, campaign_id, partner_id, placement_id, country,
  device, kind, verdict, reason, count, spend_micros, earnings_micros, with_viewer, price_id, share_id)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * The appended rows summed into `event_rollups` in key order, so each of its pages is written once
 * per fold. (`where true`: SQLite's grammar needs a WHERE before an upsert's ON CONFLICT.)
 */
const FOLD_ROLLUPS = `insert into event_rollups (minute, campaign_id, partner_id, placement_id, country,
  device, kind, verdict, reason, count, spend_micros, earnings_micros, with_viewer)
  select minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason,
    sum(count), sum(spend_micros), sum(earnings_micros), sum(with_viewer)
  from event_rollup_deltas where true
  group by minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason
  order by minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason
  on conflict (minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason)
  do update set count = event_rollups.count + excluded.count,
    spend_micros = event_rollups.spend_micros + excluded.spend_micros,
    earnings_micros = event_rollups.earnings_micros + excluded.earnings_micros,
    with_viewer = event_rollups.with_viewer + excluded.with_viewer`;

/** Whether a fold has anything to do. */
const ANYTHING_APPENDED = `select 1 from event_rollup_deltas limit 1`;

/** Without a WHERE, SQLite empties the table at once instead of row by row. */
const EMPTY_DELTAS = `delete from event_rollup_deltas`;

/** How far `campaign_rollups` sum the rollups already (migration 013). */
const COMPACTED = `select value from meta where key = '${COMPACTED_BEFORE}'`;

const ADD_TO_CAMPAIGN_ROLLUP = `insert into campaign_rollups (campaign_id, slot, kind, verdict, count,
  spend_micros, earnings_micros, with_viewer) values (?, ?, ?, ?, ?, ?, ?, ?)
  on conflict (campaign_id, slot, kind, verdict) do update set count = campaign_rollups.count + excluded.count,
    spend_micros = campaign_rollups.spend_micros + excluded.spend_micros,
    earnings_micros = campaign_rollups.earnings_micros + excluded.earnings_micros,
    with_viewer = campaign_rollups.with_viewer + excluded.with_viewer`;

interface Statements {
  claim: BetterSqlite3.Statement;
  held: BetterSqlite3.Statement<unknown[], { fingerprint: string | null }>;
  insertEvent: BetterSqlite3.Statement;
  appendRollup: BetterSqlite3.Statement;
  compacted: BetterSqlite3.Statement<unknown[], { value: string }>;
  addToCampaignRollup: BetterSqlite3.Statement;
}

/** Prepared once per connection, on first use (after migrations have created the tables). */
const prepared = new WeakMap<BetterSqlite3.Database, Statements>();

function statementsOf(sqlite: BetterSqlite3.Database): Statements {
  let statements = prepared.get(sqlite);
  if (!statements) {
    statements = {
      // Not `pluck()`: statements are shared through the connection's statement cache, and a
      // mode set here would change them for every other user of the same SQL.
      claim: sqlite.prepare(CLAIM),
      held: sqlite.prepare<unknown[], { fingerprint: string | null }>(HELD),
      insertEvent: sqlite.prepare(INSERT_EVENT),
      appendRollup: sqlite.prepare(APPEND_ROLLUP),
      compacted: sqlite.prepare<unknown[], { value: string }>(COMPACTED),
      addToCampaignRollup: sqlite.prepare(ADD_TO_CAMPAIGN_ROLLUP),
    };
    prepared.set(sqlite, statements);
  }
  return statements;
}

/**
 * A batch's write on SQLite, to run inside the batch's transaction: idempotent replays settled
 * (D9), raw events inserted, per-minute rollup rows appended (summed once per batch, folded into
 * `event_rollups` later), so a report, which reads `event_rollups_live`, includes an event from the
 * moment its request is answered. Returns the batch settled (see `SettledBatch`).
 *
 * Synchronous and on prepared statements, row by row: this is tracking's hot path, and a query
 * builder compiling three multi-row statements per batch cost more than the statements themselves
 * (docs/benchmarks.md). The first event of each (API key, Idempotency-Key) pair claims the pair
 * with its request's fingerprint unless a live claim (younger than 24 hours) exists, from an
 * earlier batch, another process or before a restart; every other event carrying it becomes a
 * `duplicate` if it asks for what the claim holds, and is refused if it asks for something else.
 */
export function storeBatchSqlite(
  sqlite: BetterSqlite3.Database,
  events: readonly TrackedEvent[],
  charge: Charge | null,
): SettledBatch {
  const { claim, held, insertEvent, appendRollup, compacted, addToCampaignRollup } = statementsOf(sqlite);
  const expiredBefore = idempotencyExpiry(events);
  const settled: TrackedEvent[] = [];
  const refused: number[] = [];
  // A repeat within the batch finds the claim its first event just made (live), like any replay.
  for (const [index, event] of events.entries()) {
    const key = event.idempotencyKey;
    const fingerprint = key === null ? null : requestFingerprint(event);
    if (
      key === null ||
      claim.get(event.apiKeyId, key, event.occurredAt, fingerprint, expiredBefore) !== undefined
    ) {
      settled.push(event);
      continue;
    }
    // A key claimed before fingerprints were kept (null) matches any request, as it did then.
    const holds = held.get(event.apiKeyId, key)?.fingerprint ?? null;
    if (holds === null || holds === fingerprint)
      settled.push(settledAs(event, 'duplicate', REASONS.idempotentReplay, 0, 0));
    else refused.push(index);
  }
  const stored = charge === null ? settled : charge(settled);

  const rollups = new Map<
    string,
    { event: TrackedEvent; minute: number; count: number; spend: Micros; earnings: Micros; viewers: number }
  >();
  for (const event of stored) {
    insertEvent.run(
      event.kind,
      event.campaignId,
      event.placement,
      event.country,
      event.device,
      event.partnerId,
      event.apiKeyId,
      event.occurredAt,
      event.verdict,
      event.reason,
      event.idempotencyKey,
      event.userAddress,
      event.eventAt ?? null,
      event.costMicros ?? 0,
      event.earningsMicros ?? 0,
    );
    const minute = minuteOf(event.occurredAt);
    // The price and share too: the fold adds a row's count and sums to those of its price and share.
    const dimensions = `${minute}\0${event.campaignId}\0${event.partnerId}\0${event.placement}\0${event.country ?? ''}\0${event.device ?? ''}\0${event.kind}\0${event.verdict}\0${event.reason ?? ''}\0${event.priceId ?? ''}\0${event.shareId ?? ''}`;
    const rollup = rollups.get(dimensions);
    const cost = micros(event.costMicros ?? 0);
    const earned = micros(event.earningsMicros ?? 0);
    const viewers = event.viewer === true ? 1 : 0;
    if (rollup) {
      rollup.count++;
      rollup.viewers += viewers;
      if (cost !== 0) rollup.spend = addMicros(rollup.spend, cost);
      if (earned !== 0) rollup.earnings = addMicros(rollup.earnings, earned);
    } else rollups.set(dimensions, { event, minute, count: 1, spend: cost, earnings: earned, viewers });
  }
  // Read once the batch holds the write lock (its first write is behind it), so no compaction can
  // move it before the batch commits.
  const compactedBefore = Number(compacted.get()?.value ?? 0);
  const appended = appendingRollups(sqlite);
  for (const { event, minute, count, spend, earnings, viewers } of rollups.values()) {
    const priceId = event.priceId ?? null;
    const shareId = event.shareId ?? null;
    const { lastInsertRowid } = appendRollup.run(
      minute,
      event.campaignId,
      event.partnerId,
      event.placement,
      event.country ?? '',
      event.device ?? '',
      event.kind,
      event.verdict,
      event.reason ?? '',
      count,
      spend,
      earnings,
      viewers,
      priceId,
      shareId,
    );
    appended?.(Number(lastInsertRowid), {
      priceId,
      partnerId: event.partnerId,
      shareId,
      count,
      spend,
      earnings,
    });
    // A quarter hour already summed (a late commit, demo traffic from the past) is summed here too.
    if (minute < compactedBefore)
      addToCampaignRollup.run(
        event.campaignId,
        quarterOf(minute),
        event.kind,
        event.verdict,
        count,
        spend,
        earnings,
        viewers,
      );
  }
  return { stored, refused };
}

/**
 * Sums the rollup rows appended since the last fold into `event_rollups` and empties
 * `event_rollup_deltas`; returns how many rows it folded. Inside the caller's transaction: no batch
 * can append between the two statements, and readers see the same sums before and after.
 */
function foldRollupsSqlite(sqlite: BetterSqlite3.Database): number {
  sqlite.prepare(FOLD_ROLLUPS).run();
  return sqlite.prepare(EMPTY_DELTAS).run().changes;
}

/**
 * The batch's campaigns that may be capped or charged (the models are the code's own constants),
 * each with its newest price, as one JSON array of arrays (`SettlingTuple`: a change to the columns
 * is a change to it). `?` is a JSON array of campaign ids.
 */
const SETTLING = `select json_group_array(json_array(c.id, c.advertiser_id, c.status, c.time_zone,
    c.cap_impressions_total, c.cap_clicks_total, c.cap_impressions_daily, c.cap_clicks_daily,
    c.budget_total_micros, c.budget_daily_micros, p.id, p.model, p.amount_micros, p.billed))
  from json_each(?) as batch
  join campaigns c on c.id = batch.value
  left join campaign_prices p on p.id = (select max(id) from campaign_prices where campaign_id = c.id)
  where c.cap_impressions_total is not null or c.cap_clicks_total is not null
    or c.cap_impressions_daily is not null or c.cap_clicks_daily is not null
    or c.price_model in (${PER_EVENT_PRICE_MODELS.map((model) => `'${model}'`).join(', ')})`;

type SettlingTuple = [
  id: number,
  advertiserId: number,
  status: string,
  timeZone: string,
  capImpressionsTotal: number | null,
  capClicksTotal: number | null,
  capImpressionsDaily: number | null,
  capClicksDaily: number | null,
  budgetTotalMicros: number | null,
  budgetDailyMicros: number | null,
  priceId: number | null,
  priceModel: string | null,
  priceAmountMicros: number | null,
  /** Units billed at the price as folded into its row (`event_rollup_deltas` adds what was appended since). */
  priceBilled: number | null,
];

const settlingStatements = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Statement<[string], string>>();

/**
 * The batch's campaigns that may be capped or charged, in id order, each with its price in force:
 * one statement a batch whatever its number of campaigns, its rows one JSON text. A statement a
 * campaign cost each its bind, step and reset, and better-sqlite3 builds a row's array element by
 * element through V8's slow path, where `JSON.parse` builds all of them at once: the reads cost money
 * more than any other part of the batch (instructions counted with valgrind, docs/benchmarks.md).
 * The text is this module's own, so no other user of the connection's statement cache gets `pluck`.
 */
function settlingCampaignsSqlite(sqlite: BetterSqlite3.Database, ids: readonly number[]): SettlingRow[] {
  let statement = settlingStatements.get(sqlite);
  if (statement === undefined) {
    statement = sqlite.prepare<[string], string>(SETTLING).pluck(true);
    settlingStatements.set(sqlite, statement);
  }
  const tuples = JSON.parse(statement.get(JSON.stringify(ids)) ?? '[]') as SettlingTuple[];
  tuples.sort((a, b) => a[0] - b[0]);
  // What was appended since the last fold, read only for a batch with a priced campaign.
  const appended = tuples.some((row) => row[10] !== null) ? unfoldedUnits(sqlite) : () => 0;
  return tuples.map((row) => ({
    id: row[0],
    advertiser_id: row[1],
    status: row[2],
    time_zone: row[3],
    cap_impressions_total: row[4],
    cap_clicks_total: row[5],
    cap_impressions_daily: row[6],
    cap_clicks_daily: row[7],
    budget_total_micros: row[8],
    budget_daily_micros: row[9],
    newest_price:
      row[10] === null
        ? null
        : {
            id: row[10],
            campaignId: row[0],
            model: row[11],
            amountMicros: row[12],
            billed: (row[13] ?? 0) + appended(row[10]),
          },
  }));
}

/**
 * SQLite's ledger: prepared statements on the connection's handle, inside the store's transaction
 * (SQLite has one connection, so they belong to it).
 */
export function sqliteLedger(handle: BetterSqlite3.Database): EventLedger {
  return {
    commitsAlone: false,
    store: (_db, events, charge) => storeBatchSqlite(handle, events, charge),
    chargeRows: () => sqliteChargeRows(handle),
    settlingCampaigns: (ids) => settlingCampaignsSqlite(handle, ids),
    // One events table: retention deletes its rows in chunks.
    pruneEvents,
    pruneIdempotencyKeys: (_db, now, limit) =>
      Promise.resolve(pruneIdempotencyKeysSqlite(handle, now, limit)),
    foldAppended: {
      pending: () => handle.prepare(ANYTHING_APPENDED).get() !== undefined,
      // The charges before the rollups: they are read from the rows the rollups' fold deletes.
      fold: () => {
        foldChargesSqlite(handle);
        return foldRollupsSqlite(handle);
      },
    },
    partitions: null,
  };
}
