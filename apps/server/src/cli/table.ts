/**
 * The one table renderer of the `placard` command: aligned columns two spaces apart, headers as
 * given, optional rules and a footer line (a report's totals), numeric columns right-aligned.
 * Hand-written rather than a table library: the tables are borderless plain text that scripts and
 * tests read with a regular expression, which is all the alignment there is; libraries draw boxes
 * that would have to be switched off piece by piece.
 */
export interface TableOptions {
  /** Column indexes to align right (numbers). */
  alignRight?: (index: number) => boolean;
  /** Rules of dashes under the header and above the footer. */
  rules?: boolean;
  /** A last line below a rule, such as totals. */
  footer?: readonly string[];
}

export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string {
  const lines = [header, ...rows, ...(options.footer ? [options.footer] : [])];
  // A reduce, not Math.max(...): a listing may have more rows than a call can take arguments.
  const widths = header.map((_, i) =>
    lines.reduce((width, line) => Math.max(width, (line[i] ?? '').length), 0),
  );
  const render = (line: readonly string[]) =>
    line
      .map((cell, i) =>
        options.alignRight?.(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const rule = options.rules ? [widths.map((width) => '-'.repeat(width)).join('  ')] : [];
  const footer = options.footer ? [...rule, render(options.footer)] : [];
  return [render(header), ...rule, ...rows.map(render), ...footer].join('\n') + '\n';
}
