import type { AccountKind } from '../domain/accounts.js';
import { addMicros, subtractMicros, type Micros } from '../domain/money.js';
import { effectiveCpc, effectiveCpm } from '../domain/money-rates.js';
import type { ReportDimension, ReportRequest } from '../domain/report-request.js';
import { localPeriod } from '../domain/time-zones.js';
import { BILLABLE_VERDICT } from '../domain/verdicts.js';
import { readRollups, type RollupSlice } from '../store/report-queries.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';

/** The request narrowed to the actor's own advertiser or partner. */
function scoped(request: ReportRequest, actor: Actor): ReportRequest {
  const account = actor.account;
  if (account.kind === 'operator') return request;
  const named = request.filters[account.kind];
  // Id 0 names nothing (ids start at 1): a filter of foreign ids yields an empty report.
  const own = named === undefined || named.includes(account.id) ? [account.id] : [0];
  return { ...request, filters: { ...request.filters, [account.kind]: own } };
}

/** Counts and money of one period (and one combination of the grouped dimensions). */
export interface ReportCounts {
  /** Billable (`counted`) impressions and clicks. */
  impressions: number;
  clicks: number;
  /** Billable clicks per billable impression; null without impressions. */
  ctr: number | null;
  /** Events stored with another verdict (duplicates, invalid): answered, but never billed (D10). */
  nonBillableImpressions: number;
  nonBillableClicks: number;
  /** Billable impressions the partner reported with a viewer (D20): what frequency caps could count. */
  impressionsWithViewer: number;
  /** impressionsWithViewer per billable impression (six decimals); null without impressions. */
  viewerShare: number | null;
  /** What the billable events cost, in micros of `currency` (events of no other verdict cost anything). */
  spendMicros: Micros;
  /** floor(spend × 1000 / impressions): what a thousand billable impressions cost; null without any. */
  ecpmMicros: Micros | null;
  /** floor(spend / clicks): what a billable click cost; null without any. */
  ecpcMicros: Micros | null;
  /** What the events earned their partners (payouts owed), in micros: the operator and partners only. */
  earningsMicros?: Micros;
  /** Spend − earnings: what the operator keeps, in micros; the operator only. */
  marginMicros?: Micros;
  /** The deployment's currency (`PLACARD_CURRENCY`), which every amount is in. */
  currency: string;
}

export type ReportRow = { period: string } & Partial<Record<ReportDimension, string | number | null>> &
  ReportCounts;

export interface Report {
  from: number;
  to: number;
  granularity: ReportRequest['granularity'];
  timeZone: string;
  groupBy: ReportDimension[];
  /** The currency of every amount (each row and the totals carry it too). */
  currency: string;
  rows: ReportRow[];
  totals: ReportCounts;
}

/** The slot rows are summed into in SQL for reports by hour or day (by minute: 1 minute): every
 * UTC offset in use is a multiple of 15 minutes, so a 15-minute slot never straddles a local hour
 * or day. */
const QUARTER_HOUR = 15 * 60_000;

/** Counts and money at zero, in `currency`. */
export const emptyCounts = (currency: string): ReportCounts => ({
  impressions: 0,
  clicks: 0,
  ctr: null,
  nonBillableImpressions: 0,
  nonBillableClicks: 0,
  impressionsWithViewer: 0,
  viewerShare: null,
  spendMicros: 0 as Micros,
  ecpmMicros: null,
  ecpcMicros: null,
  earningsMicros: 0 as Micros,
  marginMicros: 0 as Micros,
  currency,
});

/**
 * The amounts each kind of account reads beside the counts (D18). The operator reads them all. A
 * partner reads its earnings and the spend they are a share of (its share is its own to read, so
 * the spend follows from its earnings anyway, and beside them it can check every payout), but not
 * the operator's margin. An advertiser reads what it spent, never what a partner earned from it.
 */
export const MONEY_SEEN: Record<AccountKind, ReadonlyArray<'earningsMicros' | 'marginMicros'>> = {
  operator: ['earningsMicros', 'marginMicros'],
  partner: ['earningsMicros'],
  advertiser: [],
};

/** The counts with only the amounts `kind` may read. */
export function seenBy<T extends ReportCounts>(counts: T, kind: AccountKind): T {
  for (const field of ['earningsMicros', 'marginMicros'] as const)
    if (!MONEY_SEEN[kind].includes(field)) delete counts[field];
  return counts;
}

/** Adds `counts` into `sum` (the amounts `sum` carries), its ratios worked out again. */
export function addCounts(sum: ReportCounts, counts: ReportCounts): void {
  sum.impressions += counts.impressions;
  sum.clicks += counts.clicks;
  sum.nonBillableImpressions += counts.nonBillableImpressions;
  sum.nonBillableClicks += counts.nonBillableClicks;
  sum.impressionsWithViewer += counts.impressionsWithViewer;
  sum.spendMicros = addMicros(sum.spendMicros, counts.spendMicros);
  if (sum.earningsMicros !== undefined)
    sum.earningsMicros = addMicros(sum.earningsMicros, counts.earningsMicros ?? (0 as Micros));
  withRates(sum);
}

function add(counts: ReportCounts, slice: RollupSlice): void {
  const { kind, verdict, count } = slice;
  // Summed whatever the verdict: only counted events have a cost, and a report filtered to other
  // verdicts shows their (zero) spend rather than hiding a cost stored against them.
  counts.spendMicros = addMicros(counts.spendMicros, slice.spend);
  counts.earningsMicros = addMicros(counts.earningsMicros ?? (0 as Micros), slice.earnings);
  const billable = verdict === BILLABLE_VERDICT;
  if (kind === 'impression') {
    if (billable) {
      counts.impressions += count;
      counts.impressionsWithViewer += slice.withViewer;
    } else counts.nonBillableImpressions += count;
  } else if (billable) counts.clicks += count;
  else counts.nonBillableClicks += count;
}

/**
 * The counts with their ratios worked out from the sums: the click-through rate (a float of six
 * decimals: not money), eCPM and eCPC floored to the micro in integer arithmetic, and the margin
 * where the counts carry one (only the operator's do).
 */
export function withRates<T extends ReportCounts>(counts: T): T {
  if (counts.earningsMicros !== undefined && counts.marginMicros !== undefined)
    counts.marginMicros = subtractMicros(counts.spendMicros, counts.earningsMicros);
  counts.ctr = counts.impressions > 0 ? Math.round((counts.clicks / counts.impressions) * 1e6) / 1e6 : null;
  counts.viewerShare =
    counts.impressions > 0
      ? Math.round((counts.impressionsWithViewer / counts.impressions) * 1e6) / 1e6
      : null;
  counts.ecpmMicros = effectiveCpm(counts.spendMicros, counts.impressions);
  counts.ecpcMicros = effectiveCpc(counts.spendMicros, counts.clicks);
  return counts;
}

/** Absent countries and devices are stored as ''; a report shows them as null. */
const shown = (value: string | number | undefined): string | number | null =>
  value === '' || value === undefined ? null : value;

function compareRows(a: ReportRow, b: ReportRow, groupBy: readonly ReportDimension[]): number {
  if (a.period !== b.period) return a.period < b.period ? -1 : 1;
  for (const dimension of groupBy) {
    const [x, y] = [a[dimension] ?? '', b[dimension] ?? ''];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * Reports of reach, delivery, engagement and spend from the per-minute rollups, which are written in the
 * same transaction as the events: a report includes every event whose request was answered.
 */
export class ReportService {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor,
    /** The deployment's currency (`PLACARD_CURRENCY`): the rollups hold micros of it. */
    private readonly currency: string,
  ) {}

  /**
   * The report, over the traffic the actor may see (D13): an advertiser's people see their own
   * campaigns' events, a partner's people their own traffic. A filter naming another account's
   * ids is narrowed to the actor's own, so it finds nothing rather than telling what exists.
   * Its amounts are those the actor's kind of account reads (`MONEY_SEEN`).
   */
  async run(unscoped: ReportRequest): Promise<Report> {
    const request = scoped(unscoped, this.actor);
    const kind = this.actor.account.kind;
    const slices = await readRollups(this.store.db, {
      from: request.from,
      to: request.to,
      slotMs: request.granularity === 'minute' ? 60_000 : QUARTER_HOUR,
      groupBy: request.groupBy,
      filters: request.filters,
    });
    const rows = new Map<string, ReportRow>();
    const totals = emptyCounts(this.currency);
    const periods = new Map<number, string>();
    for (const slice of slices) {
      let period = periods.get(slice.slot);
      if (period === undefined) {
        period = localPeriod(slice.slot, request.granularity, request.timeZone);
        periods.set(slice.slot, period);
      }
      const dimensions = request.groupBy.map((dimension) => shown(slice.values[dimension]));
      const key = JSON.stringify([period, ...dimensions]);
      let row = rows.get(key);
      if (!row) {
        const values = Object.fromEntries(request.groupBy.map((dimension, i) => [dimension, dimensions[i]]));
        row = { period, ...values, ...emptyCounts(this.currency) };
        rows.set(key, row);
      }
      add(row, slice);
      add(totals, slice);
    }
    return {
      from: request.from,
      to: request.to,
      granularity: request.granularity,
      timeZone: request.timeZone,
      groupBy: request.groupBy,
      currency: this.currency,
      rows: [...rows.values()]
        .map((row) => seenBy(withRates(row), kind))
        .sort((a, b) => compareRows(a, b, request.groupBy)),
      totals: seenBy(withRates(totals), kind),
    };
  }
}
