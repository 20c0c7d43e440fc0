import type { FieldProblem } from './errors.js';
import { readFrequencyCaps, type FrequencyCap } from './frequency-caps.js';
import { canPaceEvenly, PACING_NEEDS_CAP_MESSAGE, PACINGS, type Pacing } from './pacing.js';
import { formatMoney, MAX_MICROS, micros, type Micros } from './money.js';
import { isPlacementId } from './placements.js';
import { readPrice, type Price } from './prices.js';
import { readSchedule, type Schedule } from './schedules.js';
import { isTimeZone } from './time-zones.js';
import { COUNTRY_CODES, DEVICES, type Device } from './targeting.js';

/** Lifecycle states of rule D11. Only `running` campaigns are served or tracked. */
export const CAMPAIGN_STATUSES = [
  'draft',
  'pending_review',
  'rejected',
  'scheduled',
  'running',
  'paused',
  'completed',
  'archived',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const isCampaignStatus = (value: unknown): value is CampaignStatus =>
  CAMPAIGN_STATUSES.some((status) => status === value);

/** A campaign as the services see it (times are epoch milliseconds, UTC). */
export interface Campaign {
  id: number;
  advertiserId: number;
  title: string;
  description: string | null;
  category: string | null;
  destinationUrl: string;
  status: CampaignStatus;
  priority: number;
  weight: number;
  placements: string[];
  /** Empty means every country. */
  countries: string[];
  /** Empty means every device. */
  devices: Device[];
  startAt: number | null;
  endAt: number | null;
  /** IANA time zone in which daily caps count (D12). */
  timeZone: string;
  caps: Caps;
  /** How its caps are spent (D16): as fast as it can, or spread evenly over their periods. */
  pacing: Pacing;
  /** At most so many impressions per viewer per hour, day or week (D20); empty: none. */
  frequencyCaps: FrequencyCap[];
  /** The hours of the week it may run, in `timeZone` (dayparting); null: every hour. */
  schedule: Schedule | null;
  /** The price in force (D18); null for a house campaign, whose events cost nothing. */
  price: Price | null;
  /** Spend budgets (D18): what its billable events may cost in all and per local day. */
  budget: Budget;
  /** Set while a daily cap holds: not served before this instant. */
  cappedUntil: number | null;
  /**
   * Set while its advertiser's budget is spent (D18): not served before this instant, the next
   * billing month's start, or `HELD_UNTIL_RAISED` (the total budget: until it changes).
   */
  budgetHeldUntil: number | null;
  rejectionReason: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Limits on counted events; null means no limit. */
export interface Caps {
  impressionsTotal: number | null;
  clicksTotal: number | null;
  impressionsDaily: number | null;
  clicksDaily: number | null;
}

export const NO_CAPS: Caps = {
  impressionsTotal: null,
  clicksTotal: null,
  impressionsDaily: null,
  clicksDaily: null,
};

/** Spend budgets in micros of the deployment's currency; null means no budget. */
export interface Budget {
  totalMicros: Micros | null;
  dailyMicros: Micros | null;
}

export const NO_BUDGET: Budget = { totalMicros: null, dailyMicros: null };

/**
 * The fields an operator supplies; everything else is assigned by the store or the lifecycle. A
 * campaign stored without `price` has none (a house campaign), one without `budget` no budget.
 */
export type CampaignInput = Omit<
  Campaign,
  | 'id'
  | 'advertiserId'
  | 'createdAt'
  | 'updatedAt'
  | 'cappedUntil'
  | 'budgetHeldUntil'
  | 'rejectionReason'
  | 'price'
  | 'budget'
  | 'frequencyCaps'
  | 'schedule'
> & { price?: Price | null; budget?: Budget; frequencyCaps?: FrequencyCap[]; schedule?: Schedule | null };

/**
 * Why the system completed or held a campaign (or all of an advertiser's), as the audit log records
 * it: the reasons the serving explainer, the review page and the webhooks (`webhook-events.ts`) read
 * back, so each is written once, here.
 */
export const REACHED = {
  totalCap: 'total cap reached',
  totalBudget: 'total budget reached',
  dailyCap: 'daily cap reached',
  dailyBudget: 'daily budget reached',
  monthlyBudget: 'monthly budget reached',
} as const;
export type ReachedReason = (typeof REACHED)[keyof typeof REACHED];

export const MIN_PRIORITY = -1000;
export const MAX_PRIORITY = 1000;
export const MAX_WEIGHT = 1_000_000;
/** A campaign's priority and weight when none is given. */
export const DEFAULT_PRIORITY = 0;
export const DEFAULT_WEIGHT = 1;

/**
 * Fields only the operator sets: priority and weight decide which campaign a fetch returns first, so
 * an advertiser who could set them would buy first place without anyone reviewing it; the price is
 * what the advertiser is charged (D18), agreed with the operator: set by the operator unless it allows
 * the advertiser to price its own campaigns (an advertiser's `pricing`, services/campaigns.ts).
 */
export const OPERATOR_FIELDS = ['priority', 'weight', 'price'] as const;

export type { FieldProblem };

function optionalText(value: unknown, path: string, max: number, problems: FieldProblem[]): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') problems.push({ field: path, message: 'must be a string' });
  else if (value.length > max) problems.push({ field: path, message: `must be at most ${max} characters` });
  else return value;
  return null;
}

function time(value: unknown, path: string, problems: FieldProblem[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return ms;
  }
  problems.push({ field: path, message: 'must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z' });
  return null;
}

function stringList(value: unknown, path: string, problems: FieldProblem[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.push({ field: path, message: 'must be an array of strings' });
    return [];
  }
  return [...new Set(value as string[])];
}

function integerIn(
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  path: string,
  problems: FieldProblem[],
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  problems.push({ field: path, message: `must be an integer between ${min} and ${max}` });
  return fallback;
}

/** True for an absolute http(s) URL, the only kind a partner can send a user to. */
export function isHttpUrl(value: string): boolean {
  if (value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Validates and normalises one campaign as given in an import file or an update. Category is an
 * open set (partner API 2.2): any lower-case word, so advertisers are not limited to the nine examples.
 */
export function validateCampaignInput(
  raw: unknown,
  path: string,
  /** The placement registry; when given, ids not in it are problems too. */
  knownPlacements?: ReadonlySet<string>,
): { value?: CampaignInput; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { problems: [{ field: path || 'body', message: 'must be an object' }] };
  }
  const fields = raw as Record<string, unknown>;
  // The root of a single campaign (the API's body) has no path: its fields are named alone.
  const at = (name: string): string => (path === '' ? name : `${path}.${name}`);

  const title = fields['title'];
  if (typeof title !== 'string' || title.trim() === '' || title.length > 200) {
    problems.push({ field: at('title'), message: 'is required: a string of 1 to 200 characters' });
  }
  const description = optionalText(fields['description'], at('description'), 1000, problems);
  const category = optionalText(fields['category'], at('category'), 64, problems);
  if (category !== null && !/^[a-z][a-z0-9_-]*$/.test(category)) {
    problems.push({ field: at('category'), message: 'must be a lower-case word such as "technology"' });
  }
  const destinationUrl = fields['destinationUrl'];
  if (typeof destinationUrl !== 'string' || !isHttpUrl(destinationUrl)) {
    problems.push({ field: at('destinationUrl'), message: 'is required: an absolute http or https URL' });
  }
  const status = fields['status'] ?? 'draft';
  if (typeof status !== 'string' || !(CAMPAIGN_STATUSES as readonly string[]).includes(status)) {
    problems.push({ field: at('status'), message: `must be one of: ${CAMPAIGN_STATUSES.join(', ')}` });
  }
  const priority = integerIn(
    fields['priority'],
    DEFAULT_PRIORITY,
    MIN_PRIORITY,
    MAX_PRIORITY,
    at('priority'),
    problems,
  );
  const weight = integerIn(fields['weight'], DEFAULT_WEIGHT, 1, MAX_WEIGHT, at('weight'), problems);

  const placements = stringList(fields['placements'], at('placements'), problems);
  if (placements.length === 0) {
    problems.push({ field: at('placements'), message: 'must name at least one placement' });
  }
  for (const id of placements) {
    if (!isPlacementId(id)) {
      problems.push({ field: at('placements'), message: `"${id}" is not a placement id` });
    } else if (knownPlacements && !knownPlacements.has(id)) {
      problems.push({ field: at('placements'), message: `unknown placement "${id}"` });
    }
  }
  const countries = stringList(fields['countries'], at('countries'), problems).map((c) => c.toUpperCase());
  for (const code of countries) {
    if (!COUNTRY_CODES.has(code)) {
      problems.push({ field: at('countries'), message: `"${code}" is not an ISO 3166-1 alpha-2 code` });
    }
  }
  const devices = stringList(fields['devices'], at('devices'), problems).map((d) => d.toLowerCase());
  for (const device of devices) {
    if (!(DEVICES as readonly string[]).includes(device)) {
      problems.push({ field: at('devices'), message: `"${device}" is not one of: ${DEVICES.join(', ')}` });
    }
  }
  const startAt = time(fields['startAt'], at('startAt'), problems);
  const endAt = time(fields['endAt'], at('endAt'), problems);
  if (startAt !== null && endAt !== null && endAt <= startAt) {
    problems.push({ field: at('endAt'), message: 'must be after startAt' });
  }
  const timeZone = fields['timeZone'] ?? 'UTC';
  if (typeof timeZone !== 'string' || !isTimeZone(timeZone)) {
    problems.push({ field: at('timeZone'), message: 'must be an IANA time zone such as "Europe/Paris"' });
  }
  const caps = validateCaps(fields['caps'], at('caps'), problems);
  const price = readPrice(fields['price'], at('price'), problems);
  const budget = readBudget(fields['budget'], at('budget'), problems);
  const frequencyCaps = readFrequencyCaps(fields['frequencyCaps'], at('frequencyCaps'), problems);
  const schedule = readSchedule(fields['schedule'], at('schedule'), problems);
  const pacing = fields['pacing'] ?? 'asap';
  if (typeof pacing !== 'string' || !(PACINGS as readonly string[]).includes(pacing)) {
    problems.push({ field: at('pacing'), message: `must be one of: ${PACINGS.join(', ')}` });
  } else if (pacing === 'even' && !canPaceEvenly(caps, endAt, budget)) {
    problems.push({ field: at('pacing'), message: PACING_NEEDS_CAP_MESSAGE });
  }

  if (problems.length > 0) return { problems };
  return {
    problems,
    value: {
      title: (title as string).trim(),
      description,
      category,
      destinationUrl: destinationUrl as string,
      status: status as CampaignStatus,
      priority,
      weight,
      placements,
      countries: [...new Set(countries)].sort(),
      devices: [...new Set(devices)].sort() as Device[],
      startAt,
      endAt,
      timeZone: timeZone as string,
      caps,
      pacing: pacing as Pacing,
      frequencyCaps,
      schedule,
      price,
      budget,
    },
  };
}

/**
 * Budgets as the management API takes them: null (none) or an object whose `totalMicros` and
 * `dailyMicros` are each null (none), left out (none) or a whole number of micros from 1 to the
 * maximum. Problems are added under `path`.
 */
export function readBudget(value: unknown, path: string, problems: FieldProblem[]): Budget {
  return readBudgetAmounts(value, path, problems, ['totalMicros', 'dailyMicros'], 'a budget');
}

/**
 * Budgets as the management API takes them, with the amounts named `fields` (campaigns' and
 * advertisers' budgets differ only in their periods): see `readBudget`. `noun` names the object in
 * problems.
 */
export function readBudgetAmounts<F extends string>(
  value: unknown,
  path: string,
  problems: FieldProblem[],
  fields: readonly F[],
  noun: string,
): Record<F, Micros | null> {
  const none = Object.fromEntries(fields.map((field) => [field, null])) as Record<F, Micros | null>;
  if (value === undefined || value === null) return none;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push({ field: path, message: `must be null or an object with ${fields.join(' and ')}` });
    return none;
  }
  const sent = value as Record<string, unknown>;
  for (const field of Object.keys(sent).filter((key) => !(fields as readonly string[]).includes(key)))
    problems.push({ field: `${path}.${field}`, message: `is not a field of ${noun}` });
  const amount = (given: unknown, field: string): Micros | null => {
    if (given === undefined || given === null) return null;
    if (typeof given === 'number' && Number.isSafeInteger(given) && given >= 1 && given <= MAX_MICROS)
      return micros(given);
    problems.push({
      field: `${path}.${field}`,
      message: `must be null or a whole number of micros from 1 to ${MAX_MICROS} (1 unit of the currency is 1000000)`,
    });
    return null;
  };
  return Object.fromEntries(fields.map((field) => [field, amount(sent[field], field)])) as Record<
    F,
    Micros | null
  >;
}

const MAX_CAP = 1_000_000_000_000;

function validateCaps(raw: unknown, path: string, problems: FieldProblem[]): Caps {
  if (raw === undefined || raw === null) return NO_CAPS;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({
      field: path,
      message: 'must be an object with impressionsTotal, clicksTotal, impressionsDaily, clicksDaily',
    });
    return NO_CAPS;
  }
  const fields = raw as Record<string, unknown>;
  const caps = { ...NO_CAPS };
  for (const name of Object.keys(fields)) {
    if (!(name in NO_CAPS)) problems.push({ field: `${path}.${name}`, message: 'is not a cap' });
  }
  for (const name of Object.keys(NO_CAPS) as Array<keyof Caps>) {
    const value = fields[name];
    if (value === undefined || value === null) continue;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_CAP)
      caps[name] = value;
    else problems.push({ field: `${path}.${name}`, message: 'must be a positive integer or null' });
  }
  return caps;
}

/** A problem for each field of `fields` not in `known`, named under `path` (a file's fields are never dropped). */
export function unknownFieldProblems(fields: object, known: readonly string[], path: string): FieldProblem[] {
  return Object.keys(fields)
    .filter((name) => !known.includes(name))
    .map((name) => ({ field: path === '' ? name : `${path}.${name}`, message: 'is not a known field' }));
}

/** Counted impressions and clicks of a campaign's whole flight. */
export interface Totals {
  impressions: number;
  clicks: number;
}

/** True when the counted totals have reached a total cap, which completes a running campaign. */
export function totalCapReached(caps: Caps, totals: Totals): boolean {
  const reached = (count: number, cap: number | null) => cap !== null && count >= cap;
  return reached(totals.impressions, caps.impressionsTotal) || reached(totals.clicks, caps.clicksTotal);
}

/** True when the campaign's flight window contains `now` (a missing bound is open). */
export function isInFlight(campaign: Pick<Campaign, 'startAt' | 'endAt'>, now: number): boolean {
  return (
    (campaign.startAt === null || campaign.startAt <= now) &&
    (campaign.endAt === null || now < campaign.endAt)
  );
}

/** Budgets in words: `USD 500.00 in total, USD 50.00 a day`, or `none`. */
export function budgetText(budget: Budget, currency: string): string {
  const parts = [
    budget.totalMicros === null ? null : `${currency} ${formatMoney(budget.totalMicros, currency)} in total`,
    budget.dailyMicros === null ? null : `${currency} ${formatMoney(budget.dailyMicros, currency)} a day`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
