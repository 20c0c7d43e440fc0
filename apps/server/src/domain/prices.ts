import type { FieldProblem } from './errors.js';
import {
  cpmRunCost,
  formatMicros,
  formatMoney,
  MAX_MICROS,
  micros,
  multiplyMicros,
  readMoney,
  type Micros,
} from './money.js';

/**
 * How a campaign is priced (D18): per thousand billable impressions (`cpm`), per billable click
 * (`cpc`), or a fixed amount for its flight (`flat`, charged once, not per event). A campaign
 * without a price (null) is a house campaign: its events cost nothing.
 */
export const PRICE_MODELS = ['cpm', 'cpc', 'flat'] as const;
export type PriceModel = (typeof PRICE_MODELS)[number];

export interface Price {
  model: PriceModel;
  /** Micros of the deployment's currency: per thousand impressions, per click, or for the flight. */
  amountMicros: Micros;
}

export const isPriceModel = (value: unknown): value is PriceModel =>
  PRICE_MODELS.some((model) => model === value);

/** The kind of event a price charges for, or null when no event costs anything (flat, no price). */
export function billedKind(price: Price | null): 'impression' | 'click' | null {
  if (price === null) return null;
  if (price.model === 'cpm') return 'impression';
  if (price.model === 'cpc') return 'click';
  return null;
}

/** The price models that charge each billable event (`flat` charges the flight, not events). */
export const PER_EVENT_PRICE_MODELS = PRICE_MODELS.filter(
  (model) => billedKind({ model, amountMicros: 1 as Micros }) !== null,
);

/** Whether a billable event of `kind` has a cost under `price`: what makes a batch settle money. */
export const chargesPerEvent = (price: Price | null, kind?: 'impression' | 'click'): boolean => {
  const billed = billedKind(price);
  return billed !== null && (kind === undefined || billed === kind);
};

/**
 * What `count` billable events cost after the first `before` under one price (what a batch's
 * commit charges them): a CPM's no-loss run (every 1,000 impressions cost exactly the CPM), a
 * CPC's amount per click, nothing for a flat price.
 */
export function runCost(price: Price, before: number, count: number): Micros {
  if (price.model === 'cpm') return cpmRunCost(price.amountMicros, before, count);
  if (price.model === 'cpc') return multiplyMicros(price.amountMicros, count);
  return 0 as Micros;
}

/** A price from stored columns (model and amount both set, or both null). */
export function priceOf(model: string | null, amount: number | string | bigint | null): Price | null {
  if (model === null || amount === null || !isPriceModel(model)) return null;
  return { model, amountMicros: micros(amount) };
}

/**
 * A price as the management API takes it: null (no price) or `{ model, amountMicros }` with a whole
 * number of micros from 1 to the maximum. Problems are added under `path`.
 */
export function readPrice(value: unknown, path: string, problems: FieldProblem[]): Price | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ field: path, message: 'must be null or an object with model and amountMicros' });
    return null;
  }
  const { model, amountMicros, ...rest } = value as Record<string, unknown>;
  for (const field of Object.keys(rest))
    problems.push({ field: `${path}.${field}`, message: 'is not a field of a price' });
  const before = problems.length;
  if (!isPriceModel(model))
    problems.push({ field: `${path}.model`, message: `must be one of ${PRICE_MODELS.join(', ')}` });
  if (
    typeof amountMicros !== 'number' ||
    !Number.isSafeInteger(amountMicros) ||
    amountMicros < 1 ||
    amountMicros > MAX_MICROS
  ) {
    problems.push({
      field: `${path}.amountMicros`,
      message: `must be a whole number of micros from 1 to ${MAX_MICROS} (1 unit of the currency is 1000000)`,
    });
  }
  if (problems.length > before || !isPriceModel(model)) return null;
  return { model, amountMicros: micros(amountMicros as number) };
}

export const samePrice = (a: Price | null, b: Price | null): boolean =>
  a === null || b === null ? a === b : a.model === b.model && a.amountMicros === b.amountMicros;

/** How people read each model: per thousand impressions, per click, for the flight. */
export const PRICE_MODEL_LABELS: Readonly<Record<PriceModel, string>> = {
  cpm: 'CPM',
  cpc: 'CPC',
  flat: 'Flat',
};

/**
 * A price's amount as people read it, exactly: the currency's decimals (`2.50`, `1,200` yen) unless
 * the price has finer micros than those show (`0.355`), as a price is never rounded where it is read.
 */
export function formatPriceAmount(amount: Micros, currency: string): string {
  const shown = formatMoney(amount, currency);
  const read = readMoney(shown);
  return 'micros' in read && read.micros === amount ? shown : formatMicros(amount);
}

/** A price in words: `CPM USD 2.50`, `Flat JPY 50,000`, or `none` (a house campaign). */
export const priceText = (price: Price | null, currency: string): string =>
  price === null
    ? 'none'
    : `${PRICE_MODEL_LABELS[price.model]} ${currency} ${formatPriceAmount(price.amountMicros, currency)}`;

/**
 * Who sets the prices of an advertiser's campaigns (D18), as the operator decides for each
 * advertiser: the operator alone (`operator`, the default), or also the advertiser's own people
 * (`advertiser`). Priority and weight stay the operator's either way.
 */
export const ADVERTISER_PRICING = ['operator', 'advertiser'] as const;
export type AdvertiserPricing = (typeof ADVERTISER_PRICING)[number];

export const isAdvertiserPricing = (value: unknown): value is AdvertiserPricing =>
  ADVERTISER_PRICING.some((pricing) => pricing === value);

/** Who sets the prices, as the command and the dashboard say it. */
export const advertiserPricingText = (pricing: AdvertiserPricing): string =>
  pricing === 'advertiser' ? 'the advertiser or the operator' : 'the operator alone';
