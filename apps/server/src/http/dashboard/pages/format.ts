import { describeFrequencyCaps, type FrequencyCap } from '../../../domain/frequency-caps.js';
/** An instant as people read it in a table: UTC, to the minute, or a dash for "never". */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** An instant to the second, where the spacing of a few moments matters (a webhook's retries). */
export function whenToTheSecond(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** An instant as the wall clock of `timeZone` shows it, to the minute, with the zone named. */
export function whenIn(ms: number, timeZone: string): string {
  // Sweden's format is ISO-like (2026-12-01 09:00), so the figures read the same everywhere.
  const local = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).format(ms);
  return `${local} ${timeZone}`;
}

/** A campaign's flight in words, in its own time zone: when it starts and ends, if it does. */
export function flight(startAt: number | null, endAt: number | null, timeZone = 'UTC'): string {
  if (startAt === null && endAt === null) return 'always';
  if (endAt === null) return `from ${whenIn(startAt!, timeZone)}`;
  if (startAt === null) return `until ${whenIn(endAt, timeZone)}`;
  return `${whenIn(startAt, timeZone)} to ${whenIn(endAt, timeZone)}`;
}

/** Frequency caps in words (D20), or that a viewer may see the campaign any number of times. */
export const frequencyCapsText = (caps: readonly FrequencyCap[]): string =>
  caps.length === 0 ? 'none' : `${describeFrequencyCaps(caps)} per viewer`;
