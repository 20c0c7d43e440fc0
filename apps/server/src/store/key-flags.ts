// Key flags (D15): the shapes of the traffic the flag job judges (counted in memory by
// serving/recent-traffic.ts) and the flags with their review. Part of the Store façade
// (store.ts): functions over a StoreContext.
import { sql, type Selectable } from 'kysely';
import type { FlagSignal, FlagStatus } from '../domain/key-flags.js';
import type { EventKind, NumberedPage, NumberedPageRequest, PageRequest } from './rows.js';
import { numberedPage, page, transact, type StoreContext } from './context.js';
import type { KeyFlagTable } from './schema.js';
import { findRow } from './table-rows.js';
import { enqueueWebhooks } from './webhooks.js';

export interface KeyFlagRecord {
  id: number;
  apiKeyId: number;
  partnerId: number;
  signal: FlagSignal;
  /** The figures, the window and the thresholds of the latest finding. */
  evidence: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  status: FlagStatus;
  reviewedAt: number | null;
  reviewedBy: string | null;
  reviewNote: string | null;
}

/** Events of one key in a window, by placement, kind and reason ('' for counted); replays left out. */
export interface KeyEventCount {
  apiKeyId: number;
  partnerId: number;
  placementId: string;
  kind: EventKind;
  reason: string;
  count: number;
}

/** Events of one key and kind in one slice of time (its start); replays left out. */
export interface KeySliceCount {
  apiKeyId: number;
  kind: EventKind;
  slice: number;
  count: number;
}

function toRecord(row: Selectable<KeyFlagTable>): KeyFlagRecord {
  return {
    id: Number(row.id),
    apiKeyId: Number(row.api_key_id),
    partnerId: Number(row.partner_id),
    signal: row.signal as FlagSignal,
    evidence: JSON.parse(row.evidence) as Record<string, unknown>,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    status: row.status as FlagStatus,
    reviewedAt: row.reviewed_at === null ? null : Number(row.reviewed_at),
    reviewedBy: row.reviewed_by,
    reviewNote: row.review_note,
  };
}

/**
 * Raises a flag, or updates the evidence of the key's open flag of that signal (one at a time, by
 * the partial unique index `key_flags_open`, whichever instance gets there first). Returns it and
 * whether it is new. A new flag's webhooks are written in the same transaction.
 */
export function saveKeyFlag(
  ctx: StoreContext,
  flag: { apiKeyId: number; partnerId: number; signal: FlagSignal; evidence: unknown },
  now: number,
): Promise<{ flag: KeyFlagRecord; raised: boolean }> {
  return transact(ctx, (tx) => saveKeyFlagIn(tx, flag, now));
}

async function saveKeyFlagIn(
  ctx: StoreContext,
  flag: { apiKeyId: number; partnerId: number; signal: FlagSignal; evidence: unknown },
  now: number,
): Promise<{ flag: KeyFlagRecord; raised: boolean }> {
  const evidence = JSON.stringify(flag.evidence);
  const open = await ctx.db
    .updateTable('key_flags')
    .set({ evidence, updated_at: now })
    .where('api_key_id', '=', flag.apiKeyId)
    .where('signal', '=', flag.signal)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
  if (open) return { flag: toRecord(open), raised: false };
  // Another instance may raise the same flag between the two statements: the index makes it one.
  const row = await ctx.db
    .insertInto('key_flags')
    .values({
      api_key_id: flag.apiKeyId,
      partner_id: flag.partnerId,
      signal: flag.signal,
      evidence,
      created_at: now,
      updated_at: now,
      status: 'open',
    })
    .onConflict((oc) =>
      oc
        .columns(['api_key_id', 'signal'])
        // The index's own predicate, as text: SQLite matches it only when it reads the same.
        .where(sql.ref('status'), '=', sql.lit('open'))
        .doUpdateSet({ evidence, updated_at: now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  const raised = toRecord(row);
  // The partner learns its key was flagged; the operator, with the evidence, that there is one to review.
  const key = { keyId: raised.apiKeyId, partnerId: raised.partnerId, signal: raised.signal };
  await enqueueWebhooks(
    ctx,
    [
      { type: 'key.flagged', owner: `partner:${raised.partnerId}`, data: key },
      { type: 'flag.raised', owner: null, data: { flagId: raised.id, ...key, evidence: flag.evidence } },
    ],
    now,
  );
  return { flag: raised, raised: true };
}

/**
 * When the key's flags of this signal were last closed by a review, if ever: dismissed (the
 * operator found nothing wrong) or suspended (the key was stopped for it; reinstated, it is not
 * flagged again for the same evidence).
 */
export async function lastReview(
  ctx: StoreContext,
  apiKeyId: number,
  signal: FlagSignal,
): Promise<number | undefined> {
  const row = await ctx.db
    .selectFrom('key_flags')
    .select((eb) => eb.fn.max('reviewed_at').as('at'))
    .where('api_key_id', '=', apiKeyId)
    .where('signal', '=', signal)
    .where('status', 'in', ['dismissed', 'suspended'])
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}

/**
 * The keys whose traffic the flag job leaves out of every baseline, and those it does not judge:
 * `flagged`, a key with an open flag, or a flag that suspended it since `since`, or suspended now;
 * `suspended`, a key suspended now (it sends nothing more; what it sent is what it was suspended for).
 */
export async function flaggedKeys(
  ctx: StoreContext,
  since: number,
): Promise<{ flagged: Set<number>; suspended: Set<number> }> {
  const flags = await ctx.db
    .selectFrom('key_flags')
    .select('api_key_id')
    .distinct()
    .where((eb) =>
      eb.or([
        eb('status', '=', 'open'),
        eb.and([eb('status', '=', 'suspended'), eb('reviewed_at', '>=', since)]),
      ]),
    )
    .execute();
  const keys = await ctx.db.selectFrom('api_keys').select('id').where('status', '=', 'suspended').execute();
  const suspended = new Set(keys.map((row) => Number(row.id)));
  return { flagged: new Set([...flags.map((row) => Number(row.api_key_id)), ...suspended]), suspended };
}

export function getKeyFlag(ctx: StoreContext, id: number): Promise<KeyFlagRecord | undefined> {
  return findRow(ctx, 'key_flags', 'id', id, toRecord);
}

/** Flags, newest first unless the page asks otherwise; of one partner, in one status, when given. */
export async function listKeyFlags(
  ctx: StoreContext,
  filter: FlagFilter,
  request: PageRequest = {},
): Promise<KeyFlagRecord[]> {
  const rows = await page(flagsOf(ctx, filter).selectAll(), request, 'id').execute();
  return rows.map(toRecord);
}

/**
 * One numbered page of the flags (of one partner, in one status or reviewed, when given), newest
 * first, with their count.
 */
export async function keyFlagPage(
  ctx: StoreContext,
  filter: FlagFilter,
  request: NumberedPageRequest,
): Promise<NumberedPage<KeyFlagRecord>> {
  return numberedPage(flagsOf(ctx, filter), 'id', request, toRecord);
}

type FlagFilter = {
  status?: FlagStatus;
  /** Only the flags closed by a review, in whichever status it left them (not `open`). */
  reviewed?: true;
  partnerId?: number;
  apiKeyId?: number;
};

function flagsOf(ctx: StoreContext, filter: FlagFilter) {
  let query = ctx.db.selectFrom('key_flags');
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.reviewed) query = query.where('status', '<>', 'open');
  if (filter.partnerId !== undefined) query = query.where('partner_id', '=', filter.partnerId);
  if (filter.apiKeyId !== undefined) query = query.where('api_key_id', '=', filter.apiKeyId);
  return query;
}

/** Closes an open flag with its review; false when it was not open any more. */
export async function reviewKeyFlag(
  ctx: StoreContext,
  id: number,
  review: { status: Exclude<FlagStatus, 'open'>; at: number; by: string; note: string | null },
): Promise<boolean> {
  const result = await ctx.db
    .updateTable('key_flags')
    .set({ status: review.status, reviewed_at: review.at, reviewed_by: review.by, review_note: review.note })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
