import { invalidField } from '../../domain/errors.js';
import type { PageRequest } from '../../store/store.js';
import { isoTimes } from '../../services/iso-times.js';

const MAX_PAGE = 200;

/** Reads `limit` (1..200, default 50) and the opaque `cursor` of the previous page. */
export function pageRequest(query: {
  readonly limit?: unknown;
  readonly cursor?: unknown;
}): Required<Pick<PageRequest, 'limit'>> & PageRequest {
  const limit = query['limit'] === undefined ? 50 : Number(query['limit']);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw invalidField('limit', `must be an integer between 1 and ${MAX_PAGE}`);
  }
  const cursor = query['cursor'];
  if (cursor === undefined || cursor === '') return { limit };
  const decoded =
    typeof cursor === 'string' && /^[A-Za-z0-9_-]+$/.test(cursor)
      ? Buffer.from(cursor, 'base64url').toString('utf8')
      : '';
  if (!/^\d{1,15}$/.test(decoded)) throw invalidField('cursor', 'is not one this API returned');
  const after = Number(decoded);
  return { limit, after };
}

/**
 * A page of results: `nextCursor` is null on the last page. Timestamps (`at` and fields ending in `At`)
 * are ISO 8601 strings in every management response.
 */
export function pageOf<T extends { id: number }>(
  items: T[],
  request: { limit: number },
  view: (item: T) => unknown,
) {
  const last = items[items.length - 1];
  return {
    status: 'success',
    data: items.map((item) => isoTimes(view(item))),
    nextCursor:
      items.length === request.limit && last ? Buffer.from(String(last.id)).toString('base64url') : null,
  };
}

export const one = (value: unknown) => ({ status: 'success', data: isoTimes(value) });

export { isId } from '../../domain/ids.js';

/** Wants CSV: `format=csv`, or no `format` and an Accept header that names text/csv. */
export function wantsCsv(format: unknown, accept: string | undefined): boolean {
  if (format === undefined || format === '') return accept?.includes('text/csv') ?? false;
  if (format !== 'csv' && format !== 'json') throw invalidField('format', 'must be json or csv');
  return format === 'csv';
}
