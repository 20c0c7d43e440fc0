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

/** Network failures on the way to the store. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** What pg says when a connection dies, or cannot be had, before the server says why. */
const LOST_CONNECTION = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout)/;

/**
 * True when a store error means the store is unavailable or overloaded for now, so the same request
 * may well succeed when retried: answered 503 with `Retry-After` (D8), not 500. SQLite: the file
 * is locked by another writer, the disk is full or failing. PostgreSQL: SQLSTATE classes 08
 * (connection exception) and 53 (insufficient resources), a server shutting down or starting (57P),
 * a statement cancelled by its timeout (57014), a transaction that lost a serialization race or a
 * deadlock (40001, 40P01); and a connection lost or past its deadline before the server answered.
 */
export function isUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR)/.test(code)) return true;
    if (/^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    if (code === '57014' || code === '40001' || code === '40P01') return true;
    if (NETWORK_CODES.has(code)) return true;
  }
  return LOST_CONNECTION.test(error.message);
}

/**
 * True when SQLite refused a write because another connection (the CLI, another process, a
 * backup tool) holds the file's write lock: worth retrying a moment later, without blocking.
 */
export function isLockedError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}
