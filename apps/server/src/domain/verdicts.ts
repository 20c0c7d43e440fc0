/**
 * Verdicts (D10): every stored event carries one. Only `counted` events are billable; the rest are
 * answered 200 like any other (so clients do not retry them) and reported apart.
 */
export const VERDICTS = ['counted', 'duplicate', 'invalid'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const BILLABLE_VERDICT: Verdict = 'counted';

/** Why an event is not billable; stored with it. */
export const REASONS = {
  idempotentReplay: 'idempotent replay',
} as const;

/** How long an `Idempotency-Key` makes a retry count once (D9). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** D9: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export const IDEMPOTENCY_KEY_MESSAGE = 'Idempotency-Key must be 1 to 255 visible ASCII characters';

/**
 * The answer (422) to a key sent again within 24 hours with a different request: another kind,
 * campaign, placement, country or device. Such a request is not a retry, and storing it as one
 * would lose an event, so it is refused and not stored; the client needs a new key.
 */
export const IDEMPOTENCY_KEY_REUSED_MESSAGE = 'Idempotency-Key was already used for a different request';

export function isValidIdempotencyKey(value: string): boolean {
  return IDEMPOTENCY_KEY.test(value);
}
