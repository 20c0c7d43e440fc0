import { sql, type RawBuilder } from 'kysely';
import { REASONS } from '../domain/verdicts.js';
import {
  COMPACTED_BEFORE,
  idempotencyExpiry,
  pruneIdempotencyKeys,
  QUARTER_HOUR,
  requestFingerprint,
  type Charge,
  type EventLedger,
  type SettledBatch,
  UnmarkedPrice,
} from './event-ledger.js';
import {
  createEventPartitions,
  dropEventPartitions,
  pruneLegacyEvents,
  readEventPartitions,
} from './event-partitions.js';
import { sqlChargeRows } from './charge-rows.js';
import { settledAs, type TrackedEvent } from './rows.js';
import type { Db } from './schema.js';

/*
 * The whole of a batch's write on PostgreSQL in one statement: idempotent replays settled (D9), raw
 * events inserted, per-minute rollups added to. One statement is one round trip and, outside a
 * transaction, its own atomic commit: a batch without capped campaigns needs no BEGIN and COMMIT,
 * so it costs the database one message exchange instead of four.
 *
 * Same rules as the SQLite path in `event-ledger-sqlite.ts`: the first event of each (API key,
 * Idempotency-Key) pair in the batch claims the pair with its request's fingerprint, unless a live
 * claim (younger than 24 hours) exists; every other event carrying the pair becomes a `duplicate`
 * if it asks for what the claim holds and is refused (not stored) if it asks for something else.
 * A live claim is seen through the upsert, never through a read: a read sees the statement's
 * snapshot, which misses a claim committed by a concurrent batch while this one waited for its
 * lock. So a live claim whose fingerprint differs from the first event's, or is null (claimed
 * before fingerprints were kept, and matching any request), is rewritten unchanged to be returned.
 * Keys and rollup rows are written in key order, so concurrent batches lock rows in one order and
 * wait rather than deadlock. A batch that settles money takes two statements (`storeBatchPostgres`).
 */

/** A batch as one array per column, for `unnest`. */
interface Columns {
  kinds: string[];
  campaigns: number[];
  placements: string[];
  countries: (string | null)[];
  devices: (string | null)[];
  partners: number[];
  apiKeys: number[];
  times: number[];
  verdicts: string[];
  reasons: (string | null)[];
  keys: (string | null)[];
  addresses: (string | null)[];
  fingerprints: string[];
  eventTimes: (number | null)[];
  costs: number[];
  earnings: number[];
  /** 1 where the partner named the viewer (D20), else 0: summed into the rollups' `with_viewer`. */
  viewers: number[];
}

function columnsOf(events: readonly TrackedEvent[]): Columns {
  return {
    kinds: events.map((event) => event.kind),
    campaigns: events.map((event) => event.campaignId),
    placements: events.map((event) => event.placement),
    countries: events.map((event) => event.country),
    devices: events.map((event) => event.device),
    partners: events.map((event) => event.partnerId),
    apiKeys: events.map((event) => event.apiKeyId),
    times: events.map((event) => event.occurredAt),
    verdicts: events.map((event) => event.verdict),
    reasons: events.map((event) => event.reason),
    keys: events.map((event) => event.idempotencyKey),
    addresses: events.map((event) => event.userAddress),
    fingerprints: events.map((event) => (event.idempotencyKey === null ? '' : requestFingerprint(event))),
    eventTimes: events.map((event) => event.eventAt ?? null),
    costs: events.map((event) => event.costMicros ?? 0),
    earnings: events.map((event) => event.earningsMicros ?? 0),
    viewers: events.map((event) => (event.viewer === true ? 1 : 0)),
  };
}

/** The batch's rows, numbered from 1 in batch order (`ord`). */
const rowsOf = (c: Columns) => sql`
  select * from unnest(
    ${c.kinds}::text[], ${c.campaigns}::bigint[], ${c.placements}::text[], ${c.countries}::text[],
    ${c.devices}::text[], ${c.partners}::bigint[], ${c.apiKeys}::bigint[], ${c.times}::bigint[],
    ${c.verdicts}::text[], ${c.reasons}::text[], ${c.keys}::text[], ${c.addresses}::text[],
    ${c.fingerprints}::text[], ${c.eventTimes}::bigint[], ${c.costs}::bigint[], ${c.earnings}::bigint[],
    ${c.viewers}::bigint[]
  ) with ordinality as t(kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
    occurred_at, verdict, reason, idempotency_key, user_address, fingerprint, event_at, cost_micros,
    earnings_micros, with_viewer, ord)`;

/** The claims of the batch's Idempotency-Keys, and each row `settled` as new, a replay or refused. */
const claimsOf = (c: Columns, expiredBefore: number) => sql`
  input as (${rowsOf(c)}),
  firsts as (
    select distinct on (api_key_id, idempotency_key) api_key_id, idempotency_key, ord, occurred_at,
      fingerprint
    from input where idempotency_key is not null
    order by api_key_id, idempotency_key, ord
  ),
  claimed as (
    insert into idempotency_keys as held (api_key_id, key, created_at, fingerprint)
    select api_key_id, idempotency_key, occurred_at, fingerprint from firsts
    order by api_key_id, idempotency_key
    on conflict (api_key_id, key) do update set
      created_at = case when held.created_at <= ${expiredBefore} then excluded.created_at
        else held.created_at end,
      fingerprint = case when held.created_at <= ${expiredBefore} then excluded.fingerprint
        else held.fingerprint end
      where held.created_at <= ${expiredBefore} or held.fingerprint is distinct from excluded.fingerprint
    returning api_key_id, key, fingerprint
  ),
  keyed as (
    select i.*, f.ord = i.ord as first_use, c.key is not null as returned,
      -- What the pair holds now: what the upsert returned, or, if nothing, the first event's request.
      case when c.key is null then f.fingerprint else c.fingerprint end as holds
    from input i
    left join firsts f on f.api_key_id = i.api_key_id and f.idempotency_key = i.idempotency_key
    left join claimed c on c.api_key_id = i.api_key_id and c.key = i.idempotency_key
  ),
  settled as (
    select *,
      case
        when idempotency_key is null then 'new'
        -- Returned with its own request: the first event inserted the pair or took it over.
        when first_use and returned and holds = fingerprint then 'new'
        when holds is null or holds = fingerprint then 'replay'
        else 'refused'
      end as outcome
    from keyed
  )`;

/** The SQLSTATE with which a batch refuses itself on finding a price the index did not mark. */
const UNMARKED_PRICE = 'PLPRC';

/**
 * The rows of `final` written: raw events, per-minute rollups, and late quarter hours. `checked`
 * is a boolean expression evaluated once, before the first row is written; false or an error stops
 * the statement.
 */
const writesOf = (checked: RawBuilder<boolean>) => sql`
  stored as (
    insert into events (kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
      occurred_at, verdict, reason, idempotency_key, user_address, event_at, cost_micros, earnings_micros)
    select kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      verdict, reason, idempotency_key, user_address, event_at, cost_micros, earnings_micros
    from final where (select ${checked}) order by ord
  ),
  rolled as (
    insert into event_rollups as rollup (minute, campaign_id, partner_id, placement_id, country, device,
      kind, verdict, reason, count, spend_micros, earnings_micros, with_viewer)
    select occurred_at - occurred_at % 60000, campaign_id, partner_id, placement_id,
      coalesce(country, ''), coalesce(device, ''), kind, verdict, coalesce(reason, ''), count(*),
      sum(cost_micros), sum(earnings_micros), sum(with_viewer)
    from final group by 1, 2, 3, 4, 5, 6, 7, 8, 9 order by 1, 2, 3, 4, 5, 6, 7, 8, 9
    on conflict (minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason)
      do update set count = rollup.count + excluded.count,
        spend_micros = rollup.spend_micros + excluded.spend_micros,
        earnings_micros = rollup.earnings_micros + excluded.earnings_micros,
        with_viewer = rollup.with_viewer + excluded.with_viewer
  ),
  -- A quarter hour already summed into campaign_rollups (a late commit, demo traffic from the past)
  -- is summed there too. The mark is read in this statement's snapshot, taken once its lock on
  -- event_rollups is granted, so a compaction (which locks the table) is all before it or all after.
  late as (
    insert into campaign_rollups as summed (campaign_id, slot, kind, verdict, count, spend_micros,
      earnings_micros, with_viewer)
    select campaign_id, occurred_at - occurred_at % ${QUARTER_HOUR}, kind, verdict, count(*),
      sum(cost_micros), sum(earnings_micros), sum(with_viewer)
    from final
    where occurred_at < (select value::bigint from meta where key = ${COMPACTED_BEFORE})
    group by 1, 2, 3, 4 order by 1, 2, 3, 4
    on conflict (campaign_id, slot, kind, verdict) do update set count = summed.count + excluded.count,
      spend_micros = summed.spend_micros + excluded.spend_micros,
      earnings_micros = summed.earnings_micros + excluded.earnings_micros,
      with_viewer = summed.with_viewer + excluded.with_viewer
  )`;

/**
 * A batch written in one statement, outside a transaction, is one the serving index marked as
 * charging nothing. The index learns of a price at its next poll, so a price set a moment ago may
 * be missed: the statement checks that no counted event's campaign charges per event, and refuses
 * itself (writing nothing) if one does, to be taken again as a batch that settles money. One lookup
 * by primary key of the batch's campaigns.
 */
const NOTHING_PRICED = sql<boolean>`case when exists (
    select 1 from campaigns where id in (select campaign_id from final where verdict = 'counted')
      and price_model in ('cpm', 'cpc')
  ) then placard_refuse(${UNMARKED_PRICE}, 'a campaign of the batch charges per event') else true end`;

/** The whole batch in one statement: claims settled, then the rows not refused written as settled. */
const settleAndWrite = (c: Columns, expiredBefore: number) => sql<Outcome>`
  with ${claimsOf(c, expiredBefore)},
  final as (
    select ord, kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      idempotency_key, user_address, event_at,
      case when outcome = 'replay' then 'duplicate' else verdict end as verdict,
      case when outcome = 'replay' then ${REASONS.idempotentReplay} else reason end as reason,
      case when outcome = 'replay' then 0 else cost_micros end as cost_micros,
      case when outcome = 'replay' then 0 else earnings_micros end as earnings_micros,
      with_viewer
    from settled where outcome <> 'refused'
  ),
  ${writesOf(NOTHING_PRICED)}
  select ord, outcome from settled where outcome <> 'new'`;

/** A priced batch's first statement: its claims alone, so its costs can follow its replays. */
const settleOnly = (c: Columns, expiredBefore: number) => sql<Outcome>`
  with ${claimsOf(c, expiredBefore)}
  select ord, outcome from settled where outcome <> 'new'`;

/** A priced batch's second statement: its rows as settled and charged, written. */
const writeOnly = (c: Columns) => sql`
  with final as (${rowsOf(c)}),
  ${writesOf(sql<boolean>`true`)}
  select count(*) as written from final`;

interface Outcome {
  ord: string | number;
  outcome: 'replay' | 'refused';
}

/**
 * Stores a batch (see above) and returns it settled (see `SettledBatch`). With `charge`, inside the
 * transaction of a batch that settles money, in two statements: the claims first, then the events as
 * settled and charged (a replay must not take a priced unit, and only the claims say which are).
 */
export async function storeBatchPostgres(
  db: Db,
  events: readonly TrackedEvent[],
  charge: Charge | null,
): Promise<SettledBatch> {
  if (events.length === 0) return { stored: [], refused: [] };
  const columns = columnsOf(events);
  const expiredBefore = idempotencyExpiry(events);
  const { rows } = await (charge === null ? settleAndWrite : settleOnly)(columns, expiredBefore)
    .execute(db)
    .catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code === UNMARKED_PRICE)
        throw new UnmarkedPrice(String(error));
      throw error;
    });
  // `with ordinality` numbers from 1.
  const outcomes = new Map(rows.map((row) => [Number(row.ord) - 1, row.outcome]));
  const settled: TrackedEvent[] = [];
  const refused: number[] = [];
  for (const [index, event] of events.entries()) {
    const outcome = outcomes.get(index);
    if (outcome === 'refused') refused.push(index);
    else if (outcome === 'replay')
      settled.push(settledAs(event, 'duplicate', REASONS.idempotentReplay, 0, 0));
    else settled.push(event);
  }
  if (charge === null) return { stored: settled, refused };
  const stored = charge(settled);
  if (stored.length > 0) await writeOnly(columnsOf(stored)).execute(db);
  return { stored, refused };
}

/**
 * PostgreSQL's ledger: one statement per batch, which commits alone when there is nothing to cap;
 * raw events in daily partitions, retention dropping whole days (and deleting the legacy
 * partition's rows in chunks).
 */
export const postgresLedger: EventLedger = {
  commitsAlone: true,
  store: storeBatchPostgres,
  chargeRows: sqlChargeRows,
  settlingCampaigns: null,
  pruneEvents: pruneLegacyEvents,
  pruneIdempotencyKeys,
  foldAppended: null,
  partitions: { create: createEventPartitions, read: readEventPartitions, drop: dropEventPartitions },
};
