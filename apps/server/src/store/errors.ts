/**
 * True when a store error is about the data written (a constraint or a bad value), so retrying
 * the same rows can never succeed, as opposed to the store being unavailable or overloaded.
 * SQLite reports `SQLITE_CONSTRAINT_*` and `SQLITE_MISMATCH` codes; PostgreSQL SQLSTATE classes 22
 * (data exception) and 23 (integrity constraint violation).
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH' || /^2[23][0-9A-Z]{3}$/.test(code)
  );
}
