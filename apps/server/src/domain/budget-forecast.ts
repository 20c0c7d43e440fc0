import { subtractMicros, type Micros } from './money.js';

/**
 * When a spend budget (D18) runs out at the current pace: the spend of a recent window (the last
 * hour, from the per-minute rollups) taken as the rate it goes on at. Integer arithmetic only: what
 * is left over the window's spend, times the window, floored to the millisecond.
 */

/** The window whose spend is the current pace: the last hour. */
export const FORECAST_WINDOW_MS = 3_600_000;

/**
 * What a budget's forecast says:
 * - `runs_out`: at this pace it is spent at `at`, within its period;
 * - `lasts`: at this pace it is not spent before its period ends (or nothing was spent in the
 *   window, though something was before);
 * - `spent`: nothing is left of it.
 * Null when nothing has been spent against it yet (there is no pace to tell from), or there is no
 * budget.
 */
export type BudgetForecast =
  { state: 'runs_out'; at: number } | { state: 'lasts' } | { state: 'spent' } | null;

export interface ForecastInput {
  /** Null: no budget. */
  budget: Micros | null;
  /** Spent against it in its period so far. */
  spent: Micros;
  /** Spent in the window ending at `now` (`FORECAST_WINDOW_MS` unless `windowMs` is given). */
  recent: Micros;
  now: number;
  /** When its period ends (the local day's end for a daily budget, the flight's for a total one); null: never. */
  periodEnd: number | null;
  windowMs?: number;
}

/** The forecast of one budget (see {@link BudgetForecast}). */
export function forecastBudget(input: ForecastInput): BudgetForecast {
  const { budget, spent, recent, now, periodEnd, windowMs = FORECAST_WINDOW_MS } = input;
  if (budget === null || spent <= 0) return null;
  const left = subtractMicros(budget, spent);
  if (left <= 0) return { state: 'spent' };
  if (recent <= 0) return { state: 'lasts' };
  // ceil(left × window / recent), in bigint (the product may pass 2^53): the first millisecond at
  // which the pace has spent what is left.
  const ms = (BigInt(left) * BigInt(windowMs) + BigInt(recent) - 1n) / BigInt(recent);
  const end = periodEnd ?? Number.MAX_SAFE_INTEGER;
  if (BigInt(now) + ms >= BigInt(end)) return { state: 'lasts' };
  return { state: 'runs_out', at: now + Number(ms) };
}

/** A forecast in words, for the dashboard's budget tables: `formatAt` tells an instant. */
export function forecastText(forecast: BudgetForecast, formatAt: (at: number) => string): string {
  if (forecast === null) return '';
  if (forecast.state === 'spent') return 'spent';
  if (forecast.state === 'lasts') return 'not at the current pace';
  return formatAt(forecast.at);
}

/** A forecast as the management API and the command's JSON carry it: the instant as ISO 8601. */
export type ForecastJson = { state: 'runs_out'; at: string } | { state: 'lasts' } | { state: 'spent' } | null;

export function forecastJson(forecast: BudgetForecast): ForecastJson {
  if (forecast === null || forecast.state !== 'runs_out') return forecast;
  return { state: 'runs_out', at: new Date(forecast.at).toISOString() };
}

/** Each forecast of `forecasts` (one per budget, by period) as JSON carries it. */
export function forecastsJson<K extends string>(
  forecasts: Record<K, BudgetForecast>,
): Record<K, ForecastJson> {
  const json = {} as Record<K, ForecastJson>;
  for (const key of Object.keys(forecasts) as K[]) json[key] = forecastJson(forecasts[key]);
  return json;
}

/** A forecast as the command prints it beside a spend: `, runs out at <ISO 8601>`, or nothing. */
export function forecastSuffix(forecast: BudgetForecast): string {
  const words = forecastText(forecast, (at) => `runs out at ${new Date(at).toISOString()}`);
  return words === '' ? '' : `, ${words}`;
}

/** Spend against budgets as the management API and the command's JSON carry it: with the currency, forecasts as JSON. */
export function spendJson<K extends string, S extends { forecast: Record<K, BudgetForecast> }>(
  spend: S,
  currency: string,
): Omit<S, 'forecast'> & { currency: string; forecast: Record<K, ForecastJson> } {
  return { ...spend, currency, forecast: forecastsJson(spend.forecast) };
}
