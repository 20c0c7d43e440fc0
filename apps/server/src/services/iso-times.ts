/** How records are shown to people and scripts, by the management API and the CLI alike. */

/** Converts epoch-millisecond `at` and `…At` fields to ISO strings, recursively. */
export function isoTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(isoTimes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      (key === 'at' || key.endsWith('At')) && typeof field === 'number'
        ? new Date(field).toISOString()
        : isoTimes(field),
    ]),
  );
}
