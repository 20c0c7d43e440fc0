// Advertisers' spend budgets (D18), held in the commit of each event batch beside campaigns' budgets
// (charges.ts), and set by the management services. Functions over a StoreContext.
import { sql } from 'kysely';
import { REACHED } from '../domain/campaigns.js';
import {
  billingMonth,
  hasAdvertiserBudget,
  HELD_UNTIL_RAISED,
  startOfBillingMonth,
  startOfNextBillingMonth,
  type AdvertiserBudget,
} from '../domain/advertiser-budgets.js';
import { addMicros, micros, type Micros } from '../domain/money.js';
import { appendAudit } from './audit.js';
import type { StoreContext } from './context.js';
import type { TrackedEvent } from './rows.js';

/**
 * An advertiser with a budget, locked by the batch, with its spend counters ('total' and billing
 * months) as stored plus the batch's charges so far, and what the batch added to each.
 */
export interface AdvertiserSpend {
  id: number;
  budget: AdvertiserBudget;
  spent: Map<string, Micros>;
  added: Map<string, Micros>;
}

/** The periods an event's cost counts in against its advertiser's budgets. */
export const periodsOf = (at: number, billingTimeZone: string): [string, string] => [
  'total',
  billingMonth(at, billingTimeZone),
];

/**
 * The advertisers with a budget among those of `campaignIds`, each row locked until the batch commits
 * (PostgreSQL's `FOR UPDATE`, in id order, before the batch locks its campaigns: every batch takes
 * advertisers before campaigns, so none waits for another in the opposite order), with their spend
 * counters for the whole time and the billing months of `events`. One statement and nothing locked
 * when none of the batch's advertisers has a budget; a second to read the counters when one has.
 */
export async function lockBudgetedAdvertisers(
  ctx: StoreContext,
  campaignIds: readonly number[],
  events: readonly TrackedEvent[],
): Promise<Map<number, AdvertiserSpend>> {
  if (campaignIds.length === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('advertisers')
    .select(['id', 'budget_total_micros', 'budget_monthly_micros'])
    .where('id', 'in', (eb) =>
      eb.selectFrom('campaigns').select('advertiser_id').where('id', 'in', campaignIds),
    )
    .where((eb) =>
      eb.or([eb('budget_total_micros', 'is not', null), eb('budget_monthly_micros', 'is not', null)]),
    )
    .orderBy('id')
    .$call((q) => ctx.traits.lockRows(q))
    .execute();
  if (rows.length === 0) return new Map();
  const advertisers = new Map(
    rows.map((row) => [
      Number(row.id),
      {
        id: Number(row.id),
        budget: budgetOf(row),
        spent: new Map<string, Micros>(),
        added: new Map<string, Micros>(),
      },
    ]),
  );
  const periods = new Set(events.flatMap((event) => periodsOf(event.occurredAt, ctx.billingTimeZone)));
  const counters = await ctx.db
    .selectFrom('advertiser_spend')
    .select(['advertiser_id', 'period', 'spend_micros'])
    .where('advertiser_id', 'in', [...advertisers.keys()])
    .where('period', 'in', [...periods])
    .execute();
  for (const row of counters)
    advertisers.get(Number(row.advertiser_id))?.spent.set(row.period, micros(row.spend_micros));
  return advertisers;
}

/** An advertiser row's budgets. */
export function budgetOf(row: {
  budget_total_micros: number | string | null;
  budget_monthly_micros: number | string | null;
}): AdvertiserBudget {
  return {
    totalMicros: row.budget_total_micros === null ? null : micros(row.budget_total_micros),
    monthlyMicros: row.budget_monthly_micros === null ? null : micros(row.budget_monthly_micros),
  };
}

/**
 * Which of the advertiser's budgets spending `cost` more at `at` would pass: its total, that billing
 * month's, or neither.
 */
export function passedAdvertiserBudget(
  advertiser: AdvertiserSpend,
  at: number,
  cost: Micros,
  billingTimeZone: string,
): 'total' | 'month' | null {
  const [total, month] = periodsOf(at, billingTimeZone);
  const passes = (period: string, budget: Micros | null) =>
    budget !== null && addMicros(advertiser.spent.get(period) ?? (0 as Micros), cost) > budget;
  if (passes(total, advertiser.budget.totalMicros)) return 'total';
  return passes(month, advertiser.budget.monthlyMicros) ? 'month' : null;
}

/** Counts a charged event's cost against its advertiser's budgets. */
export function spendAgainstAdvertiser(
  advertiser: AdvertiserSpend,
  at: number,
  cost: Micros,
  billingTimeZone: string,
): void {
  for (const period of periodsOf(at, billingTimeZone)) {
    advertiser.spent.set(period, addMicros(advertiser.spent.get(period) ?? (0 as Micros), cost));
    advertiser.added.set(period, addMicros(advertiser.added.get(period) ?? (0 as Micros), cost));
  }
}

/** Adds what the batch charged to its advertisers' spend counters, in one statement. */
export async function recordAdvertiserSpend(
  ctx: StoreContext,
  advertisers: ReadonlyMap<number, AdvertiserSpend>,
): Promise<void> {
  const rows = [...advertisers.values()].flatMap((advertiser) =>
    [...advertiser.added].map(([period, spend]) => ({
      advertiser_id: advertiser.id,
      period,
      spend_micros: spend,
    })),
  );
  if (rows.length === 0) return;
  await ctx.db
    .insertInto('advertiser_spend')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['advertiser_id', 'period']).doUpdateSet((eb) => ({
        spend_micros: eb('advertiser_spend.spend_micros', '+', eb.ref('excluded.spend_micros')),
      })),
    )
    .execute();
}

/**
 * Holds the campaigns of an advertiser whose budget the batch spent (its next billable event, at
 * `next` more, would pass it at `at`): fetches stop offering them until the next billing month starts
 * (monthly budget) or the budget changes (total), as `campaigns.budget_held_until`, which the serving
 * index reads like a cap's hold. Audited once per hold, as the system's. Returns whether it held them.
 */
export async function holdSpentAdvertiser(
  ctx: StoreContext,
  advertiser: AdvertiserSpend,
  at: number,
  next: Micros,
): Promise<boolean> {
  const passed = passedAdvertiserBudget(advertiser, at, next, ctx.billingTimeZone);
  if (passed === null) return false;
  const spentTotal = passed === 'total';
  const until = spentTotal ? HELD_UNTIL_RAISED : startOfNextBillingMonth(at, ctx.billingTimeZone);
  const held = await ctx.db
    .updateTable('campaigns')
    .set({ budget_held_until: until })
    .where('advertiser_id', '=', advertiser.id)
    .where((eb) => eb.or([eb('budget_held_until', 'is', null), eb('budget_held_until', '<', until)]))
    .executeTakeFirst();
  if (Number(held.numUpdatedRows) === 0) return false;
  await appendAudit(ctx, {
    at,
    actor: 'system',
    objectType: 'advertiser',
    objectId: String(advertiser.id),
    action: 'hold',
    reason: spentTotal ? REACHED.totalBudget : REACHED.monthlyBudget,
    before: null,
    after: { budgetHeldUntil: spentTotal ? null : new Date(until).toISOString() },
  });
  return true;
}

/**
 * Sets an advertiser's budgets, in the caller's transaction. Its campaigns held by a budget are
 * released (a budget still spent holds them again at their next billable event). An advertiser
 * given a budget where it had none has its spend counters filled from the rollups, once the batches
 * charging its campaigns have committed (their locks are awaited, advertiser first, then campaigns,
 * the order batches take them in); one losing its budgets loses its counters.
 */
export async function setAdvertiserBudget(
  ctx: StoreContext,
  id: number,
  budget: AdvertiserBudget,
  now: number,
): Promise<void> {
  const before = await ctx.db
    .selectFrom('advertisers')
    .select(['budget_total_micros', 'budget_monthly_micros'])
    .where('id', '=', id)
    .$call((q) => ctx.traits.lockRows(q))
    .executeTakeFirst();
  if (before === undefined) return;
  await ctx.db
    .updateTable('advertisers')
    .set({
      budget_total_micros: budget.totalMicros,
      budget_monthly_micros: budget.monthlyMicros,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
  await ctx.db
    .updateTable('campaigns')
    .set({ budget_held_until: null })
    .where('advertiser_id', '=', id)
    .where('budget_held_until', 'is not', null)
    .execute();
  if (!hasAdvertiserBudget(budget)) {
    await ctx.db.deleteFrom('advertiser_spend').where('advertiser_id', '=', id).execute();
    return;
  }
  if (hasAdvertiserBudget(budgetOf(before))) return;
  await ctx.db
    .selectFrom('campaigns')
    .select('id')
    .where('advertiser_id', '=', id)
    .orderBy('id')
    .$call((q) => ctx.traits.lockRows(q))
    .execute();
  const month = billingMonth(now, ctx.billingTimeZone);
  const counters = [
    { advertiser_id: id, period: 'total', spend_micros: await spendSince(ctx, id, 0) },
    {
      advertiser_id: id,
      period: month,
      spend_micros: await spendSince(ctx, id, startOfBillingMonth(now, ctx.billingTimeZone)),
    },
  ];
  await ctx.db
    .insertInto('advertiser_spend')
    .values(counters)
    .onConflict((oc) =>
      oc.columns(['advertiser_id', 'period']).doUpdateSet((eb) => ({
        spend_micros: eb.ref('excluded.spend_micros'),
      })),
    )
    .execute();
}

/** What the advertiser's campaigns spent from `from` on, summed from the per-minute rollups. */
const spendSince = (ctx: StoreContext, id: number, from: number): Promise<Micros> =>
  advertiserSpendBetween(ctx, id, from, Number.MAX_SAFE_INTEGER);

/**
 * What the advertiser's campaigns spent from `since` to `until`, summed from the per-minute rollups
 * (the recent pace its budgets' forecast goes on at, or its spend since a date).
 */
export async function advertiserSpendBetween(
  ctx: StoreContext,
  id: number,
  since: number,
  until: number,
): Promise<Micros> {
  const { rows } = await sql<{ spend: string | number | null }>`
    select sum(spend_micros) as spend from event_rollups_live
    where campaign_id in (select id from campaigns where advertiser_id = ${id})
      and minute >= ${since} and minute < ${until}`.execute(ctx.db);
  return micros(rows[0]?.spend ?? 0);
}

/**
 * An advertiser's spend in total and in the billing month of `now` (`YYYY-MM`, ending at `monthEnd`): its budgets'
 * counters while it has a budget, else summed from the rollups.
 */
export async function advertiserSpend(
  ctx: StoreContext,
  id: number,
  now: number,
): Promise<{ month: string; monthEnd: number; totalMicros: Micros; monthMicros: Micros; counted: boolean }> {
  const month = billingMonth(now, ctx.billingTimeZone);
  const monthEnd = startOfNextBillingMonth(now, ctx.billingTimeZone);
  const rows = await ctx.db
    .selectFrom('advertiser_spend')
    .select(['period', 'spend_micros'])
    .where('advertiser_id', '=', id)
    .where('period', 'in', ['total', month])
    .execute();
  if (rows.length === 0)
    return {
      month,
      monthEnd,
      totalMicros: await spendSince(ctx, id, 0),
      monthMicros: await spendSince(ctx, id, startOfBillingMonth(now, ctx.billingTimeZone)),
      counted: false,
    };
  const of = (period: string) => micros(rows.find((row) => row.period === period)?.spend_micros ?? 0);
  return { month, monthEnd, totalMicros: of('total'), monthMicros: of(month), counted: true };
}
