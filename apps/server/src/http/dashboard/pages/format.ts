/** An instant as people read it in a table: UTC, to the minute, or a dash for "never". */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A campaign's flight in words: when it starts and ends, if it does. */
export function flight(startAt: number | null, endAt: number | null): string {
  if (startAt === null && endAt === null) return 'always';
  if (endAt === null) return `from ${when(startAt)}`;
  if (startAt === null) return `until ${when(endAt)}`;
  return `${when(startAt)} to ${when(endAt)}`;
}
