/**
 * Verdicts (D10): every stored event carries one. Only `counted` events are billable; the rest are
 * answered 200 like any other (so clients do not retry them) and reported apart.
 */
export const VERDICTS = ['counted', 'duplicate', 'invalid'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const BILLABLE_VERDICT: Verdict = 'counted';

/**
 * Why an event is not billable (D15): a closed set, stored with the event and counted in the
 * rollups. `counted` events have no reason; `duplicate` ones have `idempotentReplay`; `invalid`
 * ones one of the others, decided on the request path (`serving/traffic-judge.ts`), or for
 * `pastCap`, `pastBudget` and `pastAdvertiserBudget` when the batch is stored (`store/events.ts`, `store/charges.ts`).
 * docs/product-rules.md (D15) says what each means and why it is not billed.
 */
export const REASONS = {
  /** The same Idempotency-Key and request again within 24 hours (D9): the event was already stored. */
  idempotentReplay: 'idempotent replay',
  /**
   * A click with no unclicked billable impression of its key, campaign and placement before it; or,
   * with a serve token, no billable impression of that token in the hour before it.
   */
  clickWithoutImpression: 'click without impression',
  /** The end user's `userAgent` is a known bot, crawler or automated client. */
  knownBot: 'known bot',
  /** The end user's `userIp` sent more events than a person does (`ADDRESS_RATE`). */
  addressRate: 'address rate',
  /**
   * The campaign had already reached the cap of this kind of event (total, or daily in its time
   * zone) when the event was stored: it was shown or clicked before the instance learnt (D16).
   */
  pastCap: 'past cap',
  /**
   * Charging the event would have taken its campaign's spend past a budget (total, or daily in its
   * time zone) when the event was stored (D18): it was shown or clicked before the instance learnt.
   */
  pastBudget: 'past budget',
  /**
   * Charging the event would have taken its advertiser's spend, all its campaigns together, past a
   * budget (total, or monthly in the billing time zone) when the event was stored (D18).
   */
  pastAdvertiserBudget: 'past advertiser budget',
  /**
   * The event's serve token (D15, `serve-tokens.ts`) was not signed by this deployment for its API
   * key, campaign and placement: forged, altered, or another key's, campaign's or placement's.
   */
  badToken: 'bad token',
  /**
   * A genuine serve token past its lifetime: an impression more than `SERVE_TOKEN_TTL_MS` after the
   * fetch (the answer was kept or cached for later page views), or a click after that and its hour.
   */
  expiredToken: 'expired token',
  /**
   * The serve token was used already: a second impression with it (the answer served another page
   * view, or the impression was reported twice), or a second click after its impression.
   */
  tokenReplay: 'token replay',
  /** A click less than `MIN_CLICK_DELAY_MS` after its serve token's impression: faster than a person. */
  clickTooFast: 'click too fast',
  /** The second click of a double click: the same user clicking again within DOUBLE_CLICK_WINDOW_MS; never evidence against the key. */
  doubleClick: 'double click',
  /**
   * An impression shown to a viewer (the partner's `viewer`, D20) who had already been shown the
   * campaign as often as one of its frequency caps allows in that hour, day or week.
   */
  pastFrequencyCap: 'past frequency cap',
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS];
export const REASON_VALUES: readonly Reason[] = Object.values(REASONS);

/** The verdict each reason comes with. */
export const VERDICT_OF_REASON: Readonly<Record<Reason, Verdict>> = {
  [REASONS.idempotentReplay]: 'duplicate',
  [REASONS.clickWithoutImpression]: 'invalid',
  [REASONS.knownBot]: 'invalid',
  [REASONS.addressRate]: 'invalid',
  [REASONS.pastCap]: 'invalid',
  [REASONS.pastBudget]: 'invalid',
  [REASONS.pastAdvertiserBudget]: 'invalid',
  [REASONS.badToken]: 'invalid',
  [REASONS.expiredToken]: 'invalid',
  [REASONS.tokenReplay]: 'invalid',
  [REASONS.clickTooFast]: 'invalid',
  /** The second click of a double click: the same user clicking again within DOUBLE_CLICK_WINDOW_MS; never evidence against the key. */
  [REASONS.doubleClick]: 'invalid',
  [REASONS.pastFrequencyCap]: 'invalid',
};

/**
 * How long a billable impression can be clicked (D15): a click consumes the oldest unclicked
 * impression of its API key, campaign and placement from the last hour.
 */
export const CLICK_WINDOW_MS = 60 * 60 * 1000;

/**
 * A second click of the same display within this of the first is the second click of a double
 * click (D15), `double click`, not billed: an operating system's double-click time is at most about
 * half a second (Windows' default, macOS's slowest setting is under 2 s), and two seconds leaves room
 * for the partner's server relaying the two clicks with different delays. With a serve token, the
 * same token; without, the same end user (the same forwarded `userAgent` and `userIp`) on the same
 * key, campaign and placement.
 */
export const DOUBLE_CLICK_WINDOW_MS = 2_000;

/**
 * Without end-user signals nothing tells two people apart, so any two clicks of one key, campaign
 * and placement this close together are taken for a double click: shorter than
 * `DOUBLE_CLICK_WINDOW_MS`, since each real click it catches is an honest click not billed
 * (docs/product-rules.md, D15, gives the cost).
 */
export const UNSIGNED_DOUBLE_CLICK_WINDOW_MS = 500;

/** How many unclicked impressions are remembered per key, campaign and placement (the oldest go). */
export const MAX_UNCLICKED_IMPRESSIONS = 1_000;

/**
 * The rate past which one end-user address is not billed (D15): a burst of 60 events (impressions
 * and clicks together), then one a second, per address and instance.
 */
export const ADDRESS_RATE = { perSecond: 1, burst: 60 } as const;

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
