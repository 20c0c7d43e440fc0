import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { withId } from './table-ids.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/** The tables a statement is kept in: rows are only ever added to them. */
const INSERT_ONLY = [
  'statement_months',
  'statements',
  'statement_lines',
  'statement_adjustments',
  'statement_payments',
] as const;

/** What the triggers answer to an UPDATE or DELETE: the rule, so whoever tried knows why. */
const REFUSAL =
  'issued statements never change (D18): statements, their lines, adjustments and payments are only ever added; record an adjustment instead';

/**
 * Monthly statements (D18), in tables rows are only ever added to: database triggers refuse an
 * UPDATE or DELETE of any of them, so no path (the API, the command, the dashboard, SQL run through
 * the store) changes an issued statement.
 *
 * - `statement_months`: each month issued (YYYY-MM in the billing time zone), once (its key): issuing
 *   a month with no account to bill still records it, so the next month may follow.
 * - `statements`: one per account (`kind` advertiser or partner, `account_id`) and month, unique,
 *   with the figures fixed when it was issued, the account's name then included.
 * - `statement_lines`: a campaign's spend, a flat campaign's price, a partner's earnings by placement
 *   and API key (its invalid traffic as counts), or an adjustment carried on it (`adjustment_id`,
 *   unique: an adjustment is carried once).
 * - `statement_adjustments`: a signed amount on an account, with its reason, who and when.
 * - `statement_payments`: a partner statement paid, once (`statement_id` unique), with a reference.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema
    .createTable('statement_months')
    .addColumn('month', 'text', (c) => c.primaryKey())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('issued_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('statements')
    .$call(withId(engine))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'bigint', (c) => c.notNull())
    .addColumn('account_name', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('period_end', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('issued_by', 'text', (c) => c.notNull())
    .addColumn('subtotal_micros', 'bigint', (c) => c.notNull())
    .addColumn('adjustments_micros', 'bigint', (c) => c.notNull())
    .addColumn('opening_balance_micros', 'bigint', (c) => c.notNull())
    .addColumn('total_micros', 'bigint', (c) => c.notNull())
    .addColumn('payable_micros', 'bigint', (c) => c.notNull())
    .addColumn('carried_forward_micros', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('statements_account_month', ['kind', 'account_id', 'month'])
    .execute();
  await db.schema
    .createTable('statement_lines')
    .$call(withId(engine))
    .addColumn('statement_id', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'bigint')
    .addColumn('campaign_name', 'text')
    .addColumn('placement_id', 'text')
    .addColumn('api_key_id', 'bigint')
    .addColumn('api_key_name', 'text')
    .addColumn('impressions', 'bigint', (c) => c.notNull())
    .addColumn('clicks', 'bigint', (c) => c.notNull())
    .addColumn('invalid_impressions', 'bigint', (c) => c.notNull())
    .addColumn('invalid_clicks', 'bigint', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('adjustment_id', 'bigint', (c) => c.unique())
    .addColumn('reason', 'text')
    .execute();
  await db.schema
    .createIndex('statement_lines_statement')
    .on('statement_lines')
    .columns(['statement_id', 'id'])
    .execute();
  await db.schema
    .createTable('statement_adjustments')
    .$call(withId(engine))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'bigint', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('statement_adjustments_account')
    .on('statement_adjustments')
    .columns(['kind', 'account_id', 'id'])
    .execute();
  await db.schema
    .createTable('statement_payments')
    .$call(withId(engine))
    .addColumn('statement_id', 'bigint', (c) => c.notNull().unique())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'bigint', (c) => c.notNull())
    .addColumn('paid_by', 'text', (c) => c.notNull())
    .execute();

  if (engine === 'postgres') {
    await sql
      .raw(
        `create function placard_insert_only() returns trigger language plpgsql as $$
        begin
          raise exception using errcode = 'P0001', message = '${REFUSAL} (' || TG_OP || ' on ' || TG_TABLE_NAME || ' refused)';
        end $$`,
      )
      .execute(db);
    for (const table of INSERT_ONLY) {
      await sql
        .raw(
          `create trigger ${table}_insert_only before update or delete on ${table}
           for each row execute function placard_insert_only()`,
        )
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_no_truncate before truncate on ${table}
           for each statement execute function placard_insert_only()`,
        )
        .execute(db);
    }
  } else {
    for (const table of INSERT_ONLY) {
      for (const op of ['update', 'delete'])
        await sql
          .raw(
            `create trigger ${table}_no_${op} before ${op} on ${table} begin
             select raise(abort, '${REFUSAL} (${op.toUpperCase()} on ${table} refused)'); end`,
          )
          .execute(db);
    }
  }
}
