import { invalid } from './errors.js';

/**
 * A partner's event time (`occurredAt`, D15): when the end user saw the impression or clicked,
 * as the partner's forwarder recorded it. A forwarder that was down sends its backlog late and
 * fast; judged on receipt time, an impression and its click arrive within a second of each other
 * and read as a script. Judged on event time they read as the person did.
 */

/** How far ahead of this instance's clock an event time may be: partners' clocks drift a little. */
export const EVENT_TIME_SKEW_MS = 5_000;
const SKEW_SECONDS = EVENT_TIME_SKEW_MS / 1000;
/** How old an event time may be by default (`PLACARD_EVENT_TIME_WINDOW_MS`). */
export const DEFAULT_EVENT_TIME_WINDOW_MS = 15 * 60_000;

/** RFC 3339 in UTC (`Z`), with an optional fraction of a second: one spelling, checked cheaply. */
const UTC_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.\d{1,9})?Z$/;
const FORMAT_MESSAGE = 'occurredAt must be a UTC time, e.g. 2026-01-31T12:00:00Z';

/** The milliseconds of an `occurredAt` body value; a 400 naming the format otherwise. */
export function parseOccurredAt(value: unknown): number {
  const match = typeof value === 'string' ? UTC_TIME.exec(value) : null;
  if (match === null) throw invalid(FORMAT_MESSAGE);
  const ms = Date.parse(value as string);
  // Date.parse rolls 2026-02-30 over to March 2: a date that does not print back is not one.
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 19) !== match[1])
    throw invalid(FORMAT_MESSAGE);
  return ms;
}

/**
 * The time an event is judged at: its `occurredAt` if given, else its receipt time `now`. Up to
 * `EVENT_TIME_SKEW_MS` ahead of `now` reads as `now` (the partner's clock is a little fast); further
 * ahead, or older than `windowMs`, is a 400 naming the bound: the answer is the same for every
 * verdict, so an event stored as unbillable because of its time would be lost without the partner
 * knowing, while a 400 tells its forwarder its backlog is past what is billed (and memory of recent
 * impressions, serve tokens and the flag window cannot judge it any more).
 */
export function eventTime(occurredAt: number | undefined, now: number, windowMs: number): number {
  if (occurredAt === undefined) return now;
  if (occurredAt > now + EVENT_TIME_SKEW_MS) {
    throw invalid(`occurredAt must not be more than ${SKEW_SECONDS} seconds in the future`);
  }
  if (occurredAt < now - windowMs) throw invalid(`occurredAt must not be more than ${spell(windowMs)} old`);
  return Math.min(occurredAt, now);
}

function spell(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? '1 minute' : `${ms / 60_000} minutes`;
  return `${ms / 1000} seconds`;
}
