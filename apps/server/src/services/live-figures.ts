import type { Account } from '../domain/accounts.js';
import { invalidField } from '../domain/errors.js';
import { parseReportRequest, type ReportDimension } from '../domain/report-request.js';
import {
  DATES,
  datesOf,
  planDates,
  planWindow,
  previousPeriod,
  REPORT_WINDOWS,
  type ReportWindow,
  type WindowPlan,
} from '../domain/report-windows.js';
import { isTimeZone, localPeriod } from '../domain/time-zones.js';
import type { Store } from '../store/store.js';
import { AdvertiserService } from './advertisers.js';
import type { Actor } from './audit.js';
import { CampaignService } from './campaigns.js';
import { PartnerService } from './partners.js';
import { addCounts, emptyCounts, ReportService, seenBy, type Report, type ReportCounts } from './reports.js';

/** What each kind of account may break its figures down by, its default first. */
export const BREAKDOWNS: Record<Account['kind'], readonly ReportDimension[]> = {
  operator: ['advertiser', 'partner', 'campaign', 'placement', 'country', 'device', 'reason'],
  advertiser: ['campaign', 'placement', 'country', 'device', 'reason'],
  partner: ['placement', 'campaign', 'country', 'device', 'reason'],
};

/**
 * A live report as the dashboard asks for it: a window (or the local dates from `from` to `to`,
 * both included), a breakdown and optional narrowing.
 */
export interface FiguresQuery {
  window: ReportWindow | typeof DATES;
  /** With the window `dates`: its first and last local dates, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
  timeZone: string;
  breakdown: ReportDimension;
  campaign?: string;
  placement?: string;
}

export interface Period {
  start: number;
  label: string;
  counts: ReportCounts;
}

export interface BreakdownRow {
  value: string | number | null;
  /** The value as people know it: a campaign's title, an advertiser's or a partner's name. */
  name: string;
  counts: ReportCounts;
}

export interface Figures {
  query: FiguresQuery;
  plan: WindowPlan;
  /** Every period of the window, oldest first, those without events at 0. */
  series: Period[];
  /** The window's totals per value of the breakdown, most impressions first, at most 25. */
  breakdown: BreakdownRow[];
  /** How many more values the breakdown has (the CSV export has them all). */
  more: number;
  totals: ReportCounts;
  /** Whether the report's span reaches now, so new events can still change it. */
  live: boolean;
  /** The first and last local dates the report covers, as the date fields show them. */
  dates: { from: string; to: string };
  /** The period of the same length just before, and its totals, to compare with. */
  previous: { from: number; to: number; days?: number; totals: ReportCounts };
  /** The report as the management API and the CSV export give it (rows by period and breakdown). */
  report: Report;
}

/** A page shows the breakdown's largest values; the CSV export has every one. */
const BREAKDOWN_ROWS = 25;

/**
 * Reads a dashboard query from a page's query string: unknown windows and breakdowns fall back to
 * the defaults a person would expect; a bad time zone, campaign or placement is refused by the
 * report's own validation, naming the field.
 */
export function readFiguresQuery(params: Record<string, unknown>, kind: Account['kind']): FiguresQuery {
  const text = (name: string) => {
    const value = params[name];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const from = text('from');
  const to = text('to');
  // Dates alone (a link typed by hand) ask for those dates.
  const window = text('window') ?? ((from ?? to) ? DATES : 'day');
  const breakdown = text('breakdown') ?? BREAKDOWNS[kind][0]!;
  if (![...REPORT_WINDOWS, DATES].includes(window))
    throw invalidField('window', `must be one of: ${[...REPORT_WINDOWS, DATES].join(', ')}`);
  if (!(BREAKDOWNS[kind] as readonly string[]).includes(breakdown))
    throw invalidField('breakdown', `must be one of: ${BREAKDOWNS[kind].join(', ')}`);
  const timeZone = text('timeZone') ?? 'UTC';
  // Checked first: the window is planned in this zone before the report validates the rest.
  if (!isTimeZone(timeZone))
    throw invalidField('timeZone', 'must be an IANA time zone such as "Europe/Paris"');
  const query: FiguresQuery = {
    window: window as FiguresQuery['window'],
    timeZone,
    breakdown: breakdown as ReportDimension,
  };
  if (window === DATES) {
    // One date given is that one day.
    const first = from ?? to;
    if (first === undefined) throw invalidField('from', 'must be a date (YYYY-MM-DD)');
    query.from = first;
    query.to = to ?? first;
    planDates(query.from, query.to, timeZone); // refuses bad dates here, naming the field
  }
  const campaign = text('campaign');
  const placement = text('placement');
  if (campaign !== undefined) query.campaign = campaign;
  if (placement !== undefined) query.placement = placement;
  return query;
}

/**
 * The figures a dashboard page shows and refreshes: one report over the window grouped by the
 * breakdown, folded into a time series (for the chart and its table) and totals per breakdown
 * value. The report is the actor's own (ReportService narrows it to their account, D13).
 */
export async function liveFigures(
  store: Store,
  actor: Actor,
  query: FiguresQuery,
  now: number,
  currency: string,
): Promise<Figures> {
  const zero = () => seenBy(emptyCounts(currency), actor.account.kind);
  const plan =
    query.window === DATES
      ? planDates(query.from ?? '', query.to ?? '', query.timeZone)
      : planWindow(query.window, now, query.timeZone);
  const over = (span: { from: number; to: number }, groupBy: string) =>
    parseReportRequest(
      {
        from: new Date(span.from).toISOString(),
        to: new Date(span.to).toISOString(),
        granularity: plan.granularity,
        timeZone: query.timeZone,
        groupBy,
        campaign: query.campaign,
        placement: query.placement,
      },
      now,
    );
  const reports = new ReportService(store, actor, currency);
  const report = await reports.run(over(plan, query.breakdown));
  const before = previousPeriod(plan, query.timeZone);
  const previous = {
    ...before,
    ...(plan.days !== undefined && { days: plan.days }),
    totals: (await reports.run(over(before, ''))).totals,
  };
  const byPeriod = new Map<string, ReportCounts>();
  const byValue = new Map<string | number | null, ReportCounts>();
  const totals = zero();
  for (const row of report.rows) {
    const period = byPeriod.get(row.period) ?? zero();
    addCounts(period, row);
    byPeriod.set(row.period, period);
    const value = row[query.breakdown] ?? null;
    const sum = byValue.get(value) ?? zero();
    addCounts(sum, row);
    byValue.set(value, sum);
    addCounts(totals, row);
  }
  const series = plan.starts.map((start) => {
    const label = localPeriod(start, plan.granularity, query.timeZone);
    return { start, label, counts: byPeriod.get(label) ?? zero() };
  });
  const ranked = [...byValue.entries()].sort(
    ([a, x], [b, y]) => y.impressions - x.impressions || String(a).localeCompare(String(b)),
  );
  const shown = ranked.slice(0, BREAKDOWN_ROWS);
  const names = await namesOf(
    store,
    actor,
    query.breakdown,
    shown.map(([value]) => value),
  );
  const breakdown = shown.map(([value, counts]) => ({ value, name: names(value), counts }));
  const more = ranked.length - shown.length;
  const dates = datesOf(plan, query.timeZone);
  const live = plan.to > now;
  return { query, plan, series, breakdown, more, totals, live, dates, previous, report };
}

/** How a breakdown value reads: names for ids the actor may see, "#id" for the others. */
async function namesOf(
  store: Store,
  actor: Actor,
  dimension: ReportDimension,
  values: Array<string | number | null>,
): Promise<(value: string | number | null) => string> {
  const known = new Map<number, string>();
  if (dimension === 'campaign') {
    // One look-up per shown campaign: an operator may have far more campaigns than a page shows.
    const service = new CampaignService(store, actor);
    for (const id of values)
      if (typeof id === 'number')
        known.set(
          id,
          await service.get(id).then(
            (c) => c.title,
            () => `campaign #${id}`,
          ),
        );
  } else if (dimension === 'advertiser') {
    for (const a of await new AdvertiserService(store, actor).list({ limit: 10_000 }))
      known.set(a.id, a.name);
  } else if (dimension === 'partner') {
    for (const p of await new PartnerService(store, actor).listPartners({ limit: 10_000 }))
      known.set(p.id, p.name);
  }
  return (value) => {
    if (value === null)
      return dimension === 'reason'
        ? 'billable (no reason)'
        : dimension === 'country'
          ? 'unknown country'
          : 'unknown device';
    if (typeof value === 'number') return known.get(value) ?? `${dimension} #${value}`;
    return value;
  };
}
