import { DomainError, invalidField } from '../domain/errors.js';
import { addMicros, subtractMicros, type Micros } from '../domain/money.js';
import { floorOfProduct } from '../domain/money-rates.js';
import type { ReportRequest } from '../domain/report-request.js';
import { localDate, startOfLocalDay } from '../domain/time-zones.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';
import { namesOf } from './names.js';
import { ReportService, type ReportRow } from './reports.js';
import { requireOperatorAccount } from './scope.js';

/** Revenue (what advertisers spent), what partners earned of it, and what the operator keeps. */
export interface MoneyFigures {
  spendMicros: Micros;
  earningsMicros: Micros;
  /** spend − earnings. */
  marginMicros: Micros;
  /** floor(margin × 10,000 / spend): the margin in basis points of the revenue; null without any. */
  marginBasisPoints: number | null;
}

/** One advertiser's or partner's figures in a month. */
export interface MoneyLine extends MoneyFigures {
  id: number;
  name: string;
}

export interface MonthSummary {
  /** `YYYY-MM`, a month of the billing time zone. */
  month: string;
  /** The month's first instant and the next month's, epoch ms. */
  from: number;
  to: number;
  timeZone: string;
  currency: string;
  /** Whether the month has not ended: its figures still grow. */
  live: boolean;
  totals: MoneyFigures;
  /** Those with revenue in the month, most revenue first. */
  advertisers: MoneyLine[];
  /** Those whose traffic brought revenue in the month, most earnings first. */
  partners: MoneyLine[];
}

export interface MonthTotals extends MoneyFigures {
  month: string;
}

/** What a partner earned in one month of the billing zone. */
export interface MonthEarnings {
  month: string;
  earningsMicros: Micros;
  currency: string;
  /** Whether the month has not ended. */
  live: boolean;
}

/** How many months a summary gives the totals of: the month asked and the eleven before it. */
export const SUMMARY_MONTHS = 12;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The figures from a spend and earnings, the margin and its share worked out. */
function figures(spendMicros: Micros, earningsMicros: Micros): MoneyFigures {
  const marginMicros = subtractMicros(spendMicros, earningsMicros);
  const marginBasisPoints = spendMicros > 0 ? floorOfProduct(marginMicros, 10_000, spendMicros) : null;
  return { spendMicros, earningsMicros, marginMicros, marginBasisPoints };
}

/** Sums report rows by `key` (an advertiser, a partner, a month). */
function sumBy<K>(rows: readonly ReportRow[], key: (row: ReportRow) => K): Map<K, MoneyFigures> {
  const sums = new Map<K, [Micros, Micros]>();
  for (const row of rows) {
    const [spend, earnings] = sums.get(key(row)) ?? [0 as Micros, 0 as Micros];
    sums.set(key(row), [
      addMicros(spend, row.spendMicros),
      addMicros(earnings, row.earningsMicros ?? (0 as Micros)),
    ]);
  }
  return new Map([...sums].map(([k, [spend, earnings]]) => [k, figures(spend, earnings)]));
}

/**
 * The operator's money by month of the billing time zone (`PLACARD_BILLING_TIME_ZONE`, D18): what
 * advertisers spent, what partners earned of it (the payouts owed) and the margin, in all and by
 * advertiser and partner. Read live from the rollups through the report service, as every report
 * (those of whole campaigns from `campaign_rollups`), so they agree with the reports to the micro.
 */
export class MoneySummaryService {
  private readonly reports: ReportService;

  constructor(
    private readonly store: Store,
    private readonly actor: Actor,
    private readonly clock: () => number,
    private readonly currency: string,
    private readonly billingTimeZone: string,
  ) {
    this.reports = new ReportService(store, actor, currency);
  }

  /** The current month of the billing zone, `YYYY-MM`. */
  thisMonth(): string {
    return localDate(this.clock(), this.billingTimeZone).slice(0, 7);
  }

  /** The first instant of `month` plus `after` months, in the billing zone. */
  private startOf(month: string, after = 0): number {
    const match = MONTH.exec(month);
    if (!match) throw invalidField('month', 'must be a month, YYYY-MM (such as 2026-03)');
    return startOfLocalDay(Number(match[1]), Number(match[2]) + after, 1, this.billingTimeZone);
  }

  /** The month `count` months before `month`, `YYYY-MM`. */
  private monthBefore(month: string, count: number): string {
    return localDate(this.startOf(month, -count), this.billingTimeZone).slice(0, 7);
  }

  private request(from: number, to: number, groupBy: ReportRequest['groupBy']): ReportRequest {
    return { from, to, granularity: 'day', timeZone: this.billingTimeZone, groupBy, filters: {} };
  }

  /**
   * One month's figures (this month's without one, or given ''), in all and by advertiser and
   * partner. Anything but a `YYYY-MM` (a repeated query parameter too) is refused naming `month`.
   */
  async month(asked?: unknown): Promise<MonthSummary> {
    requireOperatorAccount(this.actor, 'read the money summary');
    const month =
      asked === undefined || asked === '' ? this.thisMonth() : typeof asked === 'string' ? asked : '';
    const [from, to] = [this.startOf(month), this.startOf(month, 1)];
    const byAdvertiser = await this.reports.run(this.request(from, to, ['advertiser']));
    const byPartner = await this.reports.run(this.request(from, to, ['partner']));
    const advertisers = sumBy(byAdvertiser.rows, (row) => Number(row.advertiser));
    const partners = sumBy(byPartner.rows, (row) => Number(row.partner));
    const names = await namesOf(this.store, this.actor, {
      advertiser: advertisers.keys(),
      partner: partners.keys(),
    });
    const lines = (sums: Map<number, MoneyFigures>, kind: 'advertiser' | 'partner') =>
      [...sums].map(([id, sum]) => ({ id, name: names[kind].get(id) ?? `${kind} #${id}`, ...sum }));
    const { spendMicros, earningsMicros } = byAdvertiser.totals;
    return {
      month,
      from,
      to,
      timeZone: this.billingTimeZone,
      currency: this.currency,
      live: to > this.clock(),
      totals: figures(spendMicros, earningsMicros ?? (0 as Micros)),
      advertisers: lines(advertisers, 'advertiser')
        .filter((line) => line.spendMicros > 0)
        .sort((a, b) => b.spendMicros - a.spendMicros || a.id - b.id),
      partners: lines(partners, 'partner')
        .filter((line) => line.spendMicros > 0)
        .sort((a, b) => b.earningsMicros - a.earningsMicros || a.id - b.id),
    };
  }

  /**
   * What the actor's partner earned this month and last month, newest first: its own traffic only
   * (the report service narrows it, D13), and no other figure of the operator's.
   */
  async partnerEarnings(): Promise<MonthEarnings[]> {
    if (this.actor.account.kind !== 'partner')
      throw new DomainError('forbidden', 'only a partner has earnings');
    const month = this.thisMonth();
    const last = this.monthBefore(month, 1);
    const report = await this.reports.run(this.request(this.startOf(last), this.startOf(month, 1), []));
    const sums = sumBy(report.rows, (row) => row.period.slice(0, 7));
    return [month, last].map((each) => ({
      month: each,
      earningsMicros: sums.get(each)?.earningsMicros ?? (0 as Micros),
      currency: this.currency,
      live: each === month,
    }));
  }

  /** The totals of the `count` months up to `month` (this month by default), newest first. */
  async months(count: number, asked?: string): Promise<MonthTotals[]> {
    requireOperatorAccount(this.actor, 'read the money summary');
    const last = asked ?? this.thisMonth();
    const first = this.monthBefore(last, count - 1);
    const report = await this.reports.run(this.request(this.startOf(first), this.startOf(last, 1), []));
    // Days are local dates of the billing zone: their first seven characters are their month.
    const sums = sumBy(report.rows, (row) => row.period.slice(0, 7));
    return Array.from({ length: count }, (_, i) => {
      const month = this.monthBefore(last, i);
      return { month, ...(sums.get(month) ?? figures(0 as Micros, 0 as Micros)) };
    });
  }
}
