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

function cells(report: Report): string[][] {
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
    [reportColumns(report), ...cells(report)].map((line) => line.map(csvField).join(',')).join('\r\n') +
    '\r\n'
  );
}

/** The report as an aligned text table with a totals line, for the terminal. */
export function reportTable(report: Report): string {
  const columns = reportColumns(report);
  const total = columns.map((column) => {
    if (column === 'period') return 'total';
    const value = (report.totals as unknown as Record<string, unknown>)[column];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  });
  const lines = [columns, ...cells(report), total];
  const widths = columns.map((_, i) => Math.max(...lines.map((line) => (line[i] ?? '').length)));
  const numeric = (i: number) => i > report.groupBy.length;
  const render = (line: string[]) =>
    line
      .map((cell, i) => (numeric(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [render(columns), rule, ...cells(report).map(render), rule, render(total)].join('\n') + '\n';
}
