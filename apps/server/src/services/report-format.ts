import type { Micros } from '../domain/money.js';
import { moneyFigure } from '../domain/money-rates.js';
import type { ReportDimension } from '../domain/report-request.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';
import { namesOf, type NamedKind, type NameIndex } from './names.js';
import type { Report } from './reports.js';

/** The counts of every report, after its period and dimensions. */
export const COUNT_COLUMNS = [
  'impressions',
  'clicks',
  'ctr',
  'nonBillableImpressions',
  'nonBillableClicks',
  'impressionsWithViewer',
  'viewerShare',
] as const;

/**
 * The amounts a report may have, after its counts, in units of the currency, and the currency last:
 * earnings and margin only in reports of those who may read them (`MONEY_SEEN`).
 */
export const MONEY_COLUMNS = ['spend', 'eCPM', 'eCPC', 'earnings', 'margin'] as const;
type MoneyColumn = (typeof MONEY_COLUMNS)[number];

/** The field of a report's row or totals behind each money column. */
const MONEY_FIELDS = {
  spend: 'spendMicros',
  eCPM: 'ecpmMicros',
  eCPC: 'ecpcMicros',
  earnings: 'earningsMicros',
  margin: 'marginMicros',
} as const;

/** The money columns of this report: those whose field its totals carry. */
export const moneyColumns = (report: Report): MoneyColumn[] =>
  MONEY_COLUMNS.filter((name) => MONEY_FIELDS[name] in report.totals);

/** Dimensions whose values are ids: each is followed by a column of the names people know them by. */
const NAMED: readonly ReportDimension[] = ['campaign', 'advertiser', 'partner'] satisfies NamedKind[];
const isNamed = (dimension: ReportDimension): dimension is NamedKind => NAMED.includes(dimension);

/** One column of a report as text: its header and its cell in a row (empty for an absent value). */
interface Column {
  name: string;
  cell: (row: Record<string, unknown>, names: NameIndex) => string;
}

const text = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : '';
const plain = (name: string): Column => ({ name, cell: (row) => text(row[name]) });
/**
 * An amount in units with the currency's decimals, as an exact decimal string made from the micros
 * (never a float); empty where there is none (eCPM without impressions).
 */
const money = (name: MoneyColumn): Column => ({
  name,
  cell: (row) => {
    const amount = row[MONEY_FIELDS[name]];
    return typeof amount === 'number' ? moneyFigure(amount as Micros, String(row['currency'])) : '';
  },
});
/** The name of the id in the `dimension` column; empty for one the actor may not see. */
const nameOf = (dimension: NamedKind): Column => ({
  name: `${dimension}Name`,
  cell: (row, names) => {
    const id = row[dimension];
    return typeof id === 'number' ? (names[dimension].get(id) ?? '') : '';
  },
});

/**
 * A report's columns, in order: period, the grouped dimensions (a campaign, advertiser or partner
 * id followed by its name: `campaign,campaignName`), the counts, the amounts, then the currency.
 */
function columnsOf(report: Report): Column[] {
  return [
    plain('period'),
    ...report.groupBy.flatMap((dimension) =>
      isNamed(dimension) ? [plain(dimension), nameOf(dimension)] : [plain(dimension)],
    ),
    ...COUNT_COLUMNS.map(plain),
    ...moneyColumns(report).map(money),
    plain('currency'),
  ];
}

/** Column names of a report, in `columnsOf` order. */
export const reportColumns = (report: Report): string[] => columnsOf(report).map((column) => column.name);

/** The names of the campaigns, advertisers and partners in a report's rows, as the actor may see them. */
export function reportNames(store: Store, actor: Actor, report: Report): Promise<NameIndex> {
  const ids = (dimension: NamedKind) =>
    report.groupBy.includes(dimension)
      ? report.rows.flatMap((row) => {
          const id = row[dimension];
          return typeof id === 'number' ? [id] : [];
        })
      : [];
  return namesOf(store, actor, {
    campaign: ids('campaign'),
    advertiser: ids('advertiser'),
    partner: ids('partner'),
  });
}

/** The report's rows as text cells in `reportColumns` order. */
export function reportCells(report: Report, names: NameIndex): string[][] {
  const columns = columnsOf(report);
  return report.rows.map((row) =>
    columns.map((column) => column.cell(row as unknown as Record<string, unknown>, names)),
  );
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
const csvField = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;

/** Lines of text cells as CSV (CRLF line ends, as RFC 4180 says): every CSV Placard gives. */
export const csvText = (lines: readonly (readonly string[])[]): string =>
  lines.map((line) => line.map(csvField).join(',')).join('\r\n') + '\r\n';

/** The report as CSV with a header line. */
export function reportCsv(report: Report, names: NameIndex): string {
  return csvText([reportColumns(report), ...reportCells(report, names)]);
}

/** The totals line of a report, in `reportColumns` order (its dimensions and names empty). */
export function reportTotals(report: Report, names: NameIndex): string[] {
  const totals = { ...report.totals, period: 'total' } as unknown as Record<string, unknown>;
  return columnsOf(report).map((column) => column.cell(totals, names));
}
