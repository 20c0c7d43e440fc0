/**
 * Whether `value` can be a stored id: a positive safe integer. Ids are 64-bit on PostgreSQL, which
 * refuses a number past 2^63 with an error rather than finding nothing; no stored id passes 2^53.
 */
export const isId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/**
 * The id written in `text` (digits only: no sign, point or exponent), or undefined when it cannot
 * be a stored id: the one reading of ids typed in paths, queries and forms, by every API.
 */
export function idFromText(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const id = Number(text);
  return isId(id) ? id : undefined;
}
