import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Advertiser budgets (D18): what all of an advertiser's campaigns may spend together, in total and
 * per month of the billing time zone (`PLACARD_BILLING_TIME_ZONE`), held in the commit like campaign
 * budgets.
 *
 * - `advertisers.budget_total_micros` and `budget_monthly_micros`: null for no limit.
 * - `advertiser_spend`: an advertiser's spend in total (`period` 'total') and per billing month
 *   ('YYYY-MM'), its budgets' counters. Kept only while the advertiser has a budget (a batch of an
 *   advertiser without one writes nothing here); filled from the rollups when a budget is first set.
 * - `campaigns.budget_held_until`: set on each of the advertiser's campaigns when its budget is spent,
 *   so fetches stop offering them: the next billing month's start, or for the total budget an instant
 *   no clock reaches, lifted when the budget changes. A column of the campaign, so the serving index
 *   learns of it through the campaigns' change feed like a cap's hold.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const column of ['budget_total_micros', 'budget_monthly_micros'])
    await db.schema.alterTable('advertisers').addColumn(column, 'bigint').execute();
  await db.schema.alterTable('campaigns').addColumn('budget_held_until', 'bigint').execute();
  await db.schema
    .createTable('advertiser_spend')
    .addColumn('advertiser_id', 'bigint', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('spend_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('advertiser_spend_pk', ['advertiser_id', 'period'])
    .execute();
}
