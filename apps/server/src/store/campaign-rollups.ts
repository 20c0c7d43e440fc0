// Rollups summed by campaign and quarter hour (migration 013), written for quarter hours that have
// closed. Part of the Store façade (store.ts): functions over a StoreContext.
import { sql } from 'kysely';
import { transact, type StoreContext } from './context.js';
import { COMPACTED_BEFORE, QUARTER_HOUR, quarterOf } from './event-ledger.js';
import type { Db } from './schema.js';

/**
 * The instant (a quarter hour's start) before which `campaign_rollups` holds every rollup: 0 on a
 * store not migrated that far.
 */
export async function rollupsCompactedBefore(db: Db): Promise<number> {
  const row = await db
    .selectFrom('meta')
    .select('value')
    .where('key', '=', COMPACTED_BEFORE)
    .executeTakeFirst();
  return row === undefined ? 0 : Number(row.value);
}

/**
 * SQLite: sums what batches appended since the last fold (rollup rows, migration 024, with what
 * their events were charged, migration 031) into their tables, in one transaction; returns how many appended rows it folded.
 * PostgreSQL: 0, its batches add to those tables themselves. Readers see the same sums before and
 * after (the `_live` views).
 */
export async function foldAppended(ctx: StoreContext): Promise<number> {
  const folding = ctx.ledger.foldAppended;
  // Read outside the transaction first: a fold with nothing to do takes no lock.
  if (folding === null || !folding.pending(ctx.db)) return 0;
  return transact(ctx, async (tx) => folding.fold(tx.db));
}

/**
 * Sums the next quarter hour before `until` that has rollups into `campaign_rollups` and moves the
 * mark past it (past `until` at once when none is left), in one transaction; returns the new mark,
 * or null when it had reached `until` already. Batches that add to a quarter hour before the mark
 * add to `campaign_rollups` themselves, so the two tables agree whatever the order: the transaction
 * first keeps writers out of `event_rollups` (`EngineTraits.lockAgainstWrites`: on SQLite the
 * transaction excludes every batch anyway, PostgreSQL locks the table), so a batch commits either
 * before it (and is summed) or after it (and sees the new mark).
 */
export async function compactRollups(ctx: StoreContext, until: number): Promise<number | null> {
  // Read outside the transaction first: a pass with nothing to do takes no lock.
  if ((await rollupsCompactedBefore(ctx.db)) >= until) return null;
  return transact(ctx, async (tx) => {
    await tx.traits.lockAgainstWrites(tx.db, 'event_rollups');
    const from = await rollupsCompactedBefore(tx.db);
    if (from >= until) return null;
    // SQLite: what batches appended is folded first, in this transaction, so the minimum and the
    // sums below read the per-minute table through its index (over the view's union, SQLite scans).
    const folding = tx.ledger.foldAppended;
    if (folding !== null && folding.pending(tx.db)) folding.fold(tx.db);
    const next = await tx.db
      .selectFrom('event_rollups')
      .select((eb) => eb.fn.min('minute').as('minute'))
      .where('minute', '>=', from)
      .where('minute', '<', until)
      .executeTakeFirst();
    const first = next?.minute === null || next?.minute === undefined ? null : Number(next.minute);
    const to = first === null ? until : quarterOf(first) + QUARTER_HOUR;
    if (first !== null)
      await tx.db
        .insertInto('campaign_rollups')
        .columns([
          'campaign_id',
          'slot',
          'kind',
          'verdict',
          'count',
          'spend_micros',
          'earnings_micros',
          'with_viewer',
        ])
        .expression((eb) =>
          eb
            .selectFrom('event_rollups')
            .select((s) => [
              'campaign_id',
              sql<number>`cast(${quarterOf(first)} as bigint)`.as('slot'),
              'kind',
              'verdict',
              s.fn.sum<number>('count').as('count'),
              s.fn.sum<number>('spend_micros').as('spend_micros'),
              s.fn.sum<number>('earnings_micros').as('earnings_micros'),
              s.fn.sum<number>('with_viewer').as('with_viewer'),
            ])
            .where('minute', '>=', quarterOf(first))
            .where('minute', '<', to)
            .groupBy(['campaign_id', 'kind', 'verdict']),
        )
        .execute();
    await tx.db
      .updateTable('meta')
      .set({ value: String(to) })
      .where('key', '=', COMPACTED_BEFORE)
      .execute();
    return to;
  });
}
