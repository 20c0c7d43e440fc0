import type { Report } from './reports.js';

const COUNT_COLUMNS = [
  'impressions',
  'clicks',
  'ctr',
  'nonBillableImpressions',
  'nonBillableClicks',
] as const;

/** Column names of a report, in order: period, the grouped dimensions, then the counts. */
export const reportColumns = (report: Report): string[] => ['period', ...report.groupBy, ...COUNT_COLUMNS];

/** The report's rows as text cells in `reportColumns` order (empty for an absent value). */
export function reportCells(report: Report): string[][] {
  const columns = reportColumns(report);
  return report.rows.map((row) =>
    columns.map((column) => {
      const value = (row as unknown as Record<string, unknown>)[column];
      return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
    }),
  );
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
const csvField = (value: string): string =>
  /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;

/** The report as CSV with a header line (CRLF line ends, as RFC 4180 says). */
export function reportCsv(report: Report): string {
  return (
    [reportColumns(report), ...reportCells(report)].map((line) => line.map(csvField).join(',')).join('\r\n') +
    '\r\n'
  );
}

/** The totals line of a report, in `reportColumns` order. */
export function reportTotals(report: Report): string[] {
  return reportColumns(report).map((column) => {
    if (column === 'period') return 'total';
    const value = (report.totals as unknown as Record<string, unknown>)[column];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  });
}
