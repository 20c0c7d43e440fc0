import type { FetchParamName, QueryValue } from '../domain/requests.js';

type FetchParams = Record<FetchParamName, QueryValue>;

/** `+` is a space and `%XX` a byte in a query string; a malformed escape is kept as written. */
function decode(value: string): string {
  if (value.indexOf('%') === -1 && value.indexOf('+') === -1) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/**
 * Reads the fetch parameters from a raw query string (without `?`). Only the four known names
 * are kept (D2 ignores the others); the result always has the same shape, which keeps the
 * hot path's property reads monomorphic, unlike a general-purpose parser's open-ended objects.
 */
export function readFetchParams(query: string): Readonly<FetchParams> {
  const params: FetchParams = {
    placement: undefined,
    limit: undefined,
    location: undefined,
    device: undefined,
  };
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    if (end > start) {
      const equals = query.indexOf('=', start);
      const hasValue = equals !== -1 && equals < end;
      const name = decode(query.slice(start, hasValue ? equals : end));
      if (name === 'placement' || name === 'limit' || name === 'location' || name === 'device') {
        const value = hasValue ? decode(query.slice(equals + 1, end)) : '';
        const previous = params[name];
        params[name] =
          previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
      }
    }
    start = end + 1;
  }
  return params;
}
