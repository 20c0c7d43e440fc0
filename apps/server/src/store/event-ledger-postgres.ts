import { sql } from 'kysely';
import { REASONS } from '../domain/verdicts.js';
import {
  COMPACTED_BEFORE,
  idempotencyExpiry,
  QUARTER_HOUR,
  requestFingerprint,
  type EventLedger,
  type SettledBatch,
} from './event-ledger.js';
import {
  createEventPartitions,
  dropEventPartitions,
  pruneLegacyEvents,
  readEventPartitions,
} from './event-partitions.js';
import type { TrackedEvent } from './rows.js';
import type { Db } from './schema.js';

/**
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
 * wait rather than deadlock.
 */
const STATEMENT = (
  kinds: string[],
  campaigns: number[],
  placements: string[],
  countries: (string | null)[],
  devices: (string | null)[],
  partners: number[],
  apiKeys: number[],
  times: number[],
  verdicts: string[],
  reasons: (string | null)[],
  keys: (string | null)[],
  addresses: (string | null)[],
  fingerprints: string[],
  eventTimes: (number | null)[],
  expiredBefore: number,
) => sql<{ ord: string | number; outcome: 'replay' | 'refused' }>`
  with input as (
    select * from unnest(
      ${kinds}::text[], ${campaigns}::bigint[], ${placements}::text[], ${countries}::text[],
      ${devices}::text[], ${partners}::bigint[], ${apiKeys}::bigint[], ${times}::bigint[],
      ${verdicts}::text[], ${reasons}::text[], ${keys}::text[], ${addresses}::text[],
      ${fingerprints}::text[], ${eventTimes}::bigint[]
    ) with ordinality as t(kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
      occurred_at, verdict, reason, idempotency_key, user_address, fingerprint, event_at, ord)
  ),
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
  ),
  final as (
    select ord, kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      idempotency_key, user_address, event_at,
      case when outcome = 'replay' then 'duplicate' else verdict end as verdict,
      case when outcome = 'replay' then ${REASONS.idempotentReplay} else reason end as reason
    from settled where outcome <> 'refused'
  ),
  stored as (
    insert into events (kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
      occurred_at, verdict, reason, idempotency_key, user_address, event_at)
    select kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      verdict, reason, idempotency_key, user_address, event_at
    from final order by ord
  ),
  rolled as (
    insert into event_rollups as rollup (minute, campaign_id, partner_id, placement_id, country, device,
      kind, verdict, reason, count)
    select occurred_at - occurred_at % 60000, campaign_id, partner_id, placement_id,
      coalesce(country, ''), coalesce(device, ''), kind, verdict, coalesce(reason, ''), count(*)
    from final group by 1, 2, 3, 4, 5, 6, 7, 8, 9 order by 1, 2, 3, 4, 5, 6, 7, 8, 9
    on conflict (minute, campaign_id, partner_id, placement_id, country, device, kind, verdict, reason)
      do update set count = rollup.count + excluded.count
  ),
  -- A quarter hour already summed into campaign_rollups (a late commit, demo traffic from the past)
  -- is summed there too. The mark is read in this statement's snapshot, taken once its lock on
  -- event_rollups is granted, so a compaction (which locks the table) is all before it or all after.
  late as (
    insert into campaign_rollups as summed (campaign_id, slot, kind, verdict, count)
    select campaign_id, occurred_at - occurred_at % ${QUARTER_HOUR}, kind, verdict, count(*)
    from final
    where occurred_at < (select value::bigint from meta where key = ${COMPACTED_BEFORE})
    group by 1, 2, 3, 4 order by 1, 2, 3, 4
    on conflict (campaign_id, slot, kind, verdict) do update set count = summed.count + excluded.count
  )
  select ord, outcome from settled where outcome <> 'new'`;

/** Stores a batch (see above) and returns it settled (see `SettledBatch`). */
export async function storeBatchPostgres(db: Db, events: readonly TrackedEvent[]): Promise<SettledBatch> {
  if (events.length === 0) return { stored: [], refused: [] };
  const { rows } = await STATEMENT(
    events.map((event) => event.kind),
    events.map((event) => event.campaignId),
    events.map((event) => event.placement),
    events.map((event) => event.country),
    events.map((event) => event.device),
    events.map((event) => event.partnerId),
    events.map((event) => event.apiKeyId),
    events.map((event) => event.occurredAt),
    events.map((event) => event.verdict),
    events.map((event) => event.reason),
    events.map((event) => event.idempotencyKey),
    events.map((event) => event.userAddress),
    events.map((event) => (event.idempotencyKey === null ? '' : requestFingerprint(event))),
    events.map((event) => event.eventAt ?? null),
    idempotencyExpiry(events),
  ).execute(db);
  if (rows.length === 0) return { stored: [...events], refused: [] };
  // `with ordinality` numbers from 1.
  const outcomes = new Map(rows.map((row) => [Number(row.ord) - 1, row.outcome]));
  const stored: TrackedEvent[] = [];
  const refused: number[] = [];
  for (const [index, event] of events.entries()) {
    const outcome = outcomes.get(index);
    if (outcome === 'refused') refused.push(index);
    else if (outcome === 'replay')
      stored.push({ ...event, verdict: 'duplicate', reason: REASONS.idempotentReplay });
    else stored.push(event);
  }
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
  pruneEvents: pruneLegacyEvents,
  partitions: { create: createEventPartitions, read: readEventPartitions, drop: dropEventPartitions },
};
