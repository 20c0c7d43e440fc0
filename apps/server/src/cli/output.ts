import { DomainError, MESSAGE_PROBLEMS } from '../domain/errors.js';
import { ConfigError } from '../config.js';
import { renderTable } from './table.js';

/** Output options every command accepts. */
export interface OutputOptions {
  json?: boolean;
}

export type Row = Record<string, string | number | boolean | null | undefined>;

/** Prints rows as an aligned text table for people (headers in capitals, absent values as "-"). */
export function printTable(rows: readonly Row[], columns: readonly string[]): void {
  if (rows.length === 0) {
    console.log('(none)');
    return;
  }
  const cell = (value: Row[string]): string => (value === null || value === undefined ? '-' : String(value));
  const header = columns.map((column) => column.toUpperCase());
  process.stdout.write(
    renderTable(
      header,
      rows.map((row) => columns.map((column) => cell(row[column]))),
    ),
  );
}

/** `count` of a thing in words, plural unless it is 1: `1 campaign`, `0 campaigns`, `2 campaigns`. */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** Prints a result: JSON when asked, otherwise the human form. */
export function emit(options: OutputOptions, value: unknown, human: () => void): void {
  if (options.json) console.log(JSON.stringify(value, null, 2));
  else human();
}

/**
 * What to do about a failure the operator can fix at once, added to its message (so that `serve
 * --json`'s failure document, which `npm run cluster` reports, says it too); '' for any other.
 */
function remedy(error: unknown): string {
  // PostgreSQL's invalid_catalog_name: the database PLACARD_DATABASE_URL names was never created.
  if (!(error instanceof Error && 'code' in error && error.code === '3D000')) return '';
  const name = /database "([^"]+)" does not exist/.exec(error.message)?.[1];
  if (name === undefined) return '';
  return `. Create it first (createdb ${name}): a database named by PLACARD_DATABASE_URL is used as it is`;
}

/**
 * Reports a failure clearly and sets a non-zero exit code (2 for configuration, 1 otherwise). A
 * refused operation is named by the code the management API gives it too (`error (not_found): …`).
 */
export function reportFailure(options: OutputOptions, error: unknown): void {
  const known = error instanceof DomainError || error instanceof ConfigError;
  const message = (error instanceof Error ? error.message : String(error)) + remedy(error);
  const problems = error instanceof DomainError ? error.problems : [];
  const code = error instanceof DomainError ? error.code : undefined;
  if (options.json) {
    const body = {
      status: 'error',
      ...(code && { code }),
      message,
      ...(problems.length ? { problems } : {}),
    };
    console.log(JSON.stringify(body, null, 2));
  } else {
    console.error(code ? `error (${code}): ${message}` : `error: ${message}`);
    // The message spells out the first problems; a long list (a large import file) follows in full.
    if (problems.length > MESSAGE_PROBLEMS)
      for (const problem of problems) console.error(`  ${problem.field}: ${problem.message}`);
    if (!known && error instanceof Error && error.stack && process.env['PLACARD_DEBUG'])
      console.error(error.stack);
  }
  process.exitCode = error instanceof ConfigError ? 2 : 1;
}

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
