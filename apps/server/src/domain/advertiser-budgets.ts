import type { FieldProblem } from './errors.js';
import { readBudgetAmounts } from './campaigns.js';
import { formatMoney, type Micros } from './money.js';
import { localDate, startOfLocalDay } from './time-zones.js';

/**
 * An advertiser's spend budgets (D18) in micros of the deployment's currency: what all its campaigns
 * may spend together in total and in each billing month (`PLACARD_BILLING_TIME_ZONE`); null: none.
 */
export interface AdvertiserBudget {
  totalMicros: Micros | null;
  monthlyMicros: Micros | null;
}

export const NO_ADVERTISER_BUDGET: AdvertiserBudget = { totalMicros: null, monthlyMicros: null };

/** Whether the advertiser has a budget at all: only then is its spend counted in the commit. */
export const hasAdvertiserBudget = (budget: AdvertiserBudget): boolean =>
  budget.totalMicros !== null || budget.monthlyMicros !== null;

/**
 * Until when the campaigns of an advertiser whose total budget is spent are held: no clock reaches
 * it (the largest instant a Date holds), and the hold is lifted when the budget changes.
 */
export const HELD_UNTIL_RAISED = 8_640_000_000_000_000;

/** The billing month `YYYY-MM` an instant falls in, in the billing time zone. */
export function billingMonth(ms: number, billingTimeZone: string): string {
  return localDate(ms, billingTimeZone).slice(0, 7);
}

/** The instant the billing month `ms` falls in began. */
export function startOfBillingMonth(ms: number, billingTimeZone: string): number {
  const [year, month] = billingMonth(ms, billingTimeZone).split('-').map(Number) as [number, number];
  return startOfLocalDay(year, month, 1, billingTimeZone);
}

/** The instant the billing month after the one `ms` falls in begins; always later than `ms`. */
export function startOfNextBillingMonth(ms: number, billingTimeZone: string): number {
  const [year, month] = billingMonth(ms, billingTimeZone).split('-').map(Number) as [number, number];
  // Month 13 rolls over to January of the next year, as in `Date.UTC`.
  return startOfLocalDay(year, month + 1, 1, billingTimeZone);
}

/**
 * Advertiser budgets as the management API takes them: null (none) or an object whose `totalMicros`
 * and `monthlyMicros` are each null or left out (none) or a whole number of micros from 1 to the
 * maximum. Problems are added under `path`.
 */
export function readAdvertiserBudget(
  value: unknown,
  path: string,
  problems: FieldProblem[],
): AdvertiserBudget {
  return readBudgetAmounts(value, path, problems, ['totalMicros', 'monthlyMicros'], 'an advertiser budget');
}

/** Budgets in words: `USD 5,000.00 in total, USD 1,000.00 a month`, or `none`. */
export function advertiserBudgetText(budget: AdvertiserBudget, currency: string): string {
  const parts = [
    budget.totalMicros === null ? null : `${currency} ${formatMoney(budget.totalMicros, currency)} in total`,
    budget.monthlyMicros === null
      ? null
      : `${currency} ${formatMoney(budget.monthlyMicros, currency)} a month`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
