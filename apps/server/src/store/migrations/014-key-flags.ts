import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { withId as idColumn } from './table-ids.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Key flags (D15): a key whose traffic looks fraudulent or broken is flagged with its evidence, for
 * an operator to review (dismiss, or suspend the key).
 *
 * - `key_flags`: one row per flag; `evidence` is JSON (the figures, the window, the thresholds).
 *   `status` is `open` until reviewed, then `dismissed` or `suspended`, with who and when.
 * - `key_flags_open` (unique, partial: open flags only): at most one open flag per key and signal,
 *   however many instances run the job at once; a new finding updates the open flag's evidence.
 * - `key_flags_key` (api_key_id, signal, reviewed_at): the latest dismissal of a key's signal, and
 *   a partner's flags through its keys.
 *
 * The job reads no events from the store: each instance counts what it stored in memory
 * (serving/recent-traffic.ts), so no index on the events is needed for it.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await idColumn(engine)(db.schema.createTable('key_flags'))
    .addColumn('api_key_id', 'bigint', (c) => c.notNull())
    .addColumn('partner_id', 'bigint', (c) => c.notNull())
    .addColumn('signal', 'text', (c) => c.notNull())
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reviewed_at', 'bigint')
    .addColumn('reviewed_by', 'text')
    .addColumn('review_note', 'text')
    .execute();
  await db.schema
    .createIndex('key_flags_open')
    .on('key_flags')
    .columns(['api_key_id', 'signal'])
    .unique()
    .where(sql.ref('status'), '=', 'open')
    .execute();
  await db.schema
    .createIndex('key_flags_key')
    .on('key_flags')
    .columns(['api_key_id', 'signal', 'reviewed_at'])
    .execute();
  await db.schema.createIndex('key_flags_partner').on('key_flags').columns(['partner_id', 'id']).execute();
}
