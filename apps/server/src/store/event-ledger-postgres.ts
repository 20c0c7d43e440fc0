import { sql } from 'kysely';
import { REASONS } from '../domain/verdicts.js';
import { idempotencyExpiry } from './event-ledger.js';
import type { Db, TrackedEvent } from './store.js';

/**
 * The whole of a batch's write on PostgreSQL in one statement: idempotent replays settled (D9), raw
 * events inserted, per-minute rollups added to. One statement is one round trip and, outside a
 * transaction, its own atomic commit: a batch without capped campaigns needs no BEGIN and COMMIT,
 * so it costs the database one message exchange instead of four.
 *
 * Same rules as the SQLite path in `event-ledger-sqlite.ts`: the first event of each (API key,
 * Idempotency-Key) pair in the batch claims the pair, unless a live claim (younger than 24 hours)
 * exists; every other event carrying the pair becomes a `duplicate`. Keys and rollup rows are
 * written in key order, so concurrent batches lock rows in one order and wait rather than deadlock.
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
  expiredBefore: number,
) => sql<{ ord: string | number }>`
  with input as (
    select * from unnest(
      ${kinds}::text[], ${campaigns}::bigint[], ${placements}::text[], ${countries}::text[],
      ${devices}::text[], ${partners}::bigint[], ${apiKeys}::bigint[], ${times}::bigint[],
      ${verdicts}::text[], ${reasons}::text[], ${keys}::text[]
    ) with ordinality as t(kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
      occurred_at, verdict, reason, idempotency_key, ord)
  ),
  firsts as (
    select distinct on (api_key_id, idempotency_key) api_key_id, idempotency_key, ord, occurred_at
    from input where idempotency_key is not null
    order by api_key_id, idempotency_key, ord
  ),
  claimed as (
    insert into idempotency_keys as held (api_key_id, key, created_at)
    select api_key_id, idempotency_key, occurred_at from firsts order by api_key_id, idempotency_key
    on conflict (api_key_id, key) do update set created_at = excluded.created_at
      where held.created_at <= ${expiredBefore}
    returning api_key_id, key
  ),
  settled as (
    select i.*,
      i.idempotency_key is not null and (c.key is null or f.ord <> i.ord) as replay
    from input i
    left join firsts f on f.api_key_id = i.api_key_id and f.idempotency_key = i.idempotency_key
    left join claimed c on c.api_key_id = i.api_key_id and c.key = i.idempotency_key
  ),
  final as (
    select ord, kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      idempotency_key,
      case when replay then 'duplicate' else verdict end as verdict,
      case when replay then ${REASONS.idempotentReplay} else reason end as reason
    from settled
  ),
  stored as (
    insert into events (kind, campaign_id, placement_id, country, device, partner_id, api_key_id,
      occurred_at, verdict, reason, idempotency_key)
    select kind, campaign_id, placement_id, country, device, partner_id, api_key_id, occurred_at,
      verdict, reason, idempotency_key
    from final order by ord
  ),
  rolled as (
    insert into event_rollups as rollup (minute, campaign_id, partner_id, placement_id, country, device,
      kind, verdict, count)
    select occurred_at - occurred_at % 60000, campaign_id, partner_id, placement_id,
      coalesce(country, ''), coalesce(device, ''), kind, verdict, count(*)
    from final group by 1, 2, 3, 4, 5, 6, 7, 8 order by 1, 2, 3, 4, 5, 6, 7, 8
    on conflict (minute, campaign_id, partner_id, placement_id, country, device, kind, verdict)
      do update set count = rollup.count + excluded.count
  )
  select ord from settled where replay`;

/** Stores a batch (see above) and returns it settled: replays marked `duplicate`. */
export async function storeBatchPostgres(db: Db, events: readonly TrackedEvent[]): Promise<TrackedEvent[]> {
  if (events.length === 0) return [];
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
    idempotencyExpiry(events),
  ).execute(db);
  if (rows.length === 0) return [...events];
  // `with ordinality` numbers from 1.
  const replays = new Set(rows.map((row) => Number(row.ord) - 1));
  return events.map((event, index) =>
    replays.has(index) ? { ...event, verdict: 'duplicate', reason: REASONS.idempotentReplay } : event,
  );
}
