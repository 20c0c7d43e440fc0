/**
 * The paths of the strings in `value` (a body, an import file, query or path parameters) that hold
 * U+0000. SQLite would store it and PostgreSQL refuses it with an error, so it is refused before
 * anything is stored, the same on both engines. Paths are written as problems name fields:
 * `caps.clicksDaily`, `advertisers[0].campaigns[2].title`.
 */
export function nulFields(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulFields(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, field]) =>
    nulFields(field, path === '' ? name : `${path}.${name}`),
  );
}

/** The problem a field holding U+0000 is reported with. */
export const NUL_PROBLEM = 'must not contain the NUL character';
