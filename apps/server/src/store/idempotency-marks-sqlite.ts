/**
 * SQLite forgets expired idempotency keys without an index on their time (migration 032).
 *
 * An index on `created_at` cost every batch's commit three or four pages of its own: an index
 * B-tree grows at its end by rebalancing two or three full leaves, where a table appends a page.
 * Keys are random, so the table's rowid is what orders them by arrival: a key is inserted with
 * the next rowid, and one taken over after its 24 hours moves to the next rowid too (the claim in
 * `event-ledger-sqlite.ts`). An event's time is never later than its arrival (`domain/event-time.ts`),
 * so every key with a rowid up to the table's largest at an instant was created at or before it.
 *
 * Each retention pass ends by recording such a mark, `idempotency_key_marks`: the time the pass
 * started and the table's largest rowid as it ends. Keys under the newest mark at least 24 hours
 * old are expired but for those stored while that pass ran, and are deleted in rowid order, 250 a
 * statement: a range of the table, not a search. Every delete also requires the key's own
 * `created_at` to be past its window, so a key the marks misplace (one stored while the pass ran,
 * or taken over by a release before this one) stays until it expires: the marks decide where a
 * pass looks, never whether a key has expired. A key is forgotten at the first pass at least 24
 * hours after the pass that followed its arrival: up to twenty minutes after its 24 hours at the
 * default interval, later by as much as its event's `occurredAt` was before its arrival. That
 * costs rows, never a wrong answer: the claim treats a key past its window as free whether or not
 * it is still there.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { IDEMPOTENCY_WINDOW_MS } from '../domain/verdicts.js';

/** The newest mark at least the window old: every key under it has expired. */
const USABLE_MARK = `select at, last_rowid from idempotency_key_marks where at <= ?
  order by at desc limit 1`;

export const DELETE_UNDER_MARK = `delete from idempotency_keys where rowid in (
  select rowid from idempotency_keys where rowid <= ? and created_at <= ? order by rowid limit ?)`;

const MARK = `insert into idempotency_key_marks (at, last_rowid)
  select ?, coalesce(max(rowid), 0) from idempotency_keys`;

/** Marks older than the one in use cover nothing it does not. */
const FORGET_OLDER_MARKS = `delete from idempotency_key_marks where at < ?`;

interface Mark {
  at: number;
  last_rowid: number;
}

/**
 * Deletes up to `limit` expired keys under the newest usable mark; returns how many. When it
 * deletes fewer (the pass's last statement), it records the pass's mark and forgets the marks
 * older than the one it used.
 */
export function pruneIdempotencyKeysSqlite(
  handle: BetterSqlite3.Database,
  now: number,
  limit: number,
): number {
  const cutoff = now - IDEMPOTENCY_WINDOW_MS;
  const mark = handle.prepare<[number], Mark>(USABLE_MARK).get(cutoff);
  const deleted = mark ? handle.prepare(DELETE_UNDER_MARK).run(mark.last_rowid, cutoff, limit).changes : 0;
  if (deleted < limit) {
    handle.prepare(MARK).run(now);
    if (mark) handle.prepare(FORGET_OLDER_MARKS).run(mark.at);
  }
  return deleted;
}
