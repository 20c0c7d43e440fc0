import { randomBytes } from 'node:crypto';
import { addressSource, isKnownBot, truncateAddress } from '../domain/end-user.js';
import type { TrackingRequest } from '../domain/requests.js';
import { MIN_CLICK_DELAY_MS, SERVE_TOKEN_TTL_MS, ServeTokens } from '../domain/serve-tokens.js';
import { BucketMap } from '../domain/token-bucket.js';
import { ADDRESS_RATE, CLICK_WINDOW_MS, REASONS, type Reason, type Verdict } from '../domain/verdicts.js';
import { MemoryClickCredits, type ClickCredits, type ClickTake } from '../limits/click-credits.js';
import {
  MemoryServeTokenStates,
  type ServeTokenStates,
  type TokenClick,
} from '../limits/serve-token-states.js';
import type { EventKind } from '../store/store.js';

/** What the request path decided about an event before it is stored (D15). */
export interface Judgement {
  verdict: Verdict;
  reason: Reason | null;
  /** The end user's address as stored: truncated (/24, /48), or null when not sent. */
  userAddress: string | null;
  /**
   * The (API key, campaign, placement) pair whose unclicked impressions change back if the event is
   * not stored as billable (see `TrafficJudge.settle`); null when nothing is to change.
   */
  pair: string | null;
  /**
   * An untokened click's clicker (see `ClickCredits.take`), remembered as its pair's last click;
   * forgotten if the click is not stored, so that its retry is not a double click. Null otherwise.
   */
  clicker: string | null;
  /** Whether this click consumed an unclicked impression of `pair`, to give back if not billed. */
  consumed: boolean;
  /**
   * The serve token (its id) whose state this event claimed, to settle once the event is stored
   * (see `TrafficJudge.settle`); null when it claimed nothing. Never set together with `pair`.
   */
  token: string | null;
}

/** End-user addresses whose rates are kept at most; past it the oldest go. */
const MAX_ADDRESSES = 100_000;

const invalid = (reason: Reason, userAddress: string | null): Judgement => ({
  verdict: 'invalid',
  reason,
  userAddress,
  pair: null,
  token: null,
  clicker: null,
  consumed: false,
});

/**
 * Decides each event's verdict on the request path, without a store round trip (D15): a known bot
 * user agent, then an end-user address past `ADDRESS_RATE`, then, for a click, no unclicked billable
 * impression of its pair in the window, make it `invalid` with that reason; anything else is
 * `counted`. The store may still make it a `duplicate` (an idempotent replay, D9). A click of its
 * pair by the same end user within the double-click window of the pair's previous click is a
 * `double click` instead, and consumes nothing (`limits/click-credits.ts`).
 *
 * Times: `now` is when the event was received; `at` when it happened, the partner's `occurredAt`
 * (bounded, see `domain/event-time.ts`) or else `now`. Clicks are judged on `at` (their speed, their
 * impression's window, double clicks), so a partner sending a backlog late is judged as if it had
 * sent each event when it happened; the rate of an end-user address is judged on `now`.
 * An impression judged billable can be clicked at once, before it is stored (a partner sending its
 * click right after it, without waiting for the answer), and is taken back if the store does not
 * keep it as billable.
 *
 * An event with a serve token is judged by its token instead of its pair (after the bot and
 * address checks): a token that does not verify, then one past its lifetime, then (impression) a
 * token whose impression was claimed already, or (click) a token without a billable impression in
 * the hour, clicked already (a `double click` within `DOUBLE_CLICK_WINDOW_MS` of its first click, a
 * `token replay` later), or clicked less than `MIN_CLICK_DELAY_MS` after its impression. Tokened
 * events leave the pair's credits alone both ways: a tokened impression can be clicked with its
 * token only, so the same display can never be clicked once with and once without it.
 */
export class TrafficJudge {
  private readonly addresses = new BucketMap<string>(MAX_ADDRESSES);

  constructor(
    private readonly credits: ClickCredits = new MemoryClickCredits(),
    /** Signs the tokens fetch hands out and reads those events bring back: one secret for both. */
    readonly tokens: ServeTokens = new ServeTokens(randomBytes(32)),
    private readonly tokenStates: ServeTokenStates = new MemoryServeTokenStates(),
  ) {}

  judge(
    kind: EventKind,
    request: TrackingRequest,
    apiKeyId: number,
    now: number,
    at: number = now,
  ): Judgement | Promise<Judgement> {
    const userAddress = request.userIp === undefined ? null : truncateAddress(request.userIp);
    if (request.userAgent !== undefined && isKnownBot(request.userAgent)) {
      return invalid(REASONS.knownBot, userAddress);
    }
    if (
      request.userIp !== undefined &&
      this.addresses.take(addressSource(request.userIp), ADDRESS_RATE, now) > 0
    ) {
      return invalid(REASONS.addressRate, userAddress);
    }
    if (request.token !== undefined)
      return this.judgeToken(kind, request, request.token, apiKeyId, now, at, userAddress);
    const pair = `${apiKeyId}:${request.campaignId}:${request.placement}`;
    const counted: Judgement = {
      verdict: 'counted',
      reason: null,
      userAddress,
      pair,
      token: null,
      clicker: null,
      consumed: false,
    };
    if (kind === 'impression') {
      const added = this.credits.add(pair, at);
      return added === undefined ? counted : added.then(() => counted);
    }
    // Who clicked, as far as the partner said: two clicks with the same signals are one person's.
    const clicker =
      request.userAgent === undefined && request.userIp === undefined
        ? ''
        : `${request.userAgent ?? ''}\n${request.userIp ?? ''}`;
    const found = this.credits.take(pair, at, clicker);
    const decide = (take: ClickTake): Judgement =>
      take === 'counted'
        ? { ...counted, clicker, consumed: true }
        : {
            ...invalid(take === 'double' ? REASONS.doubleClick : REASONS.clickWithoutImpression, userAddress),
            pair,
            clicker,
          };
    return typeof found === 'string' ? decide(found) : found.then(decide);
  }

  /** The serve-token half of `judge`. */
  private judgeToken(
    kind: EventKind,
    request: TrackingRequest,
    token: string,
    apiKeyId: number,
    now: number,
    at: number,
    userAddress: string | null,
  ): Judgement | Promise<Judgement> {
    const claims = this.tokens.read(token, apiKeyId, request.campaignId, request.placement, now);
    if (claims === null) return invalid(REASONS.badToken, userAddress);
    const { id, issuedAt } = claims;
    const judged = (verdict: Verdict, reason: Reason | null): Judgement => ({
      verdict,
      reason,
      userAddress,
      pair: null,
      token: id,
      clicker: null,
      consumed: false,
    });
    if (kind === 'impression') {
      if (at > issuedAt + SERVE_TOKEN_TTL_MS) return invalid(REASONS.expiredToken, userAddress);
      const claimed = this.tokenStates.claimImpression(id, now, at);
      const decide = (first: boolean): Judgement =>
        first ? judged('counted', null) : invalid(REASONS.tokenReplay, userAddress);
      return typeof claimed === 'boolean' ? decide(claimed) : claimed.then(decide);
    }
    // The latest a token's click can be billed: its impression's latest time, and that one's hour.
    if (at > issuedAt + SERVE_TOKEN_TTL_MS + CLICK_WINDOW_MS)
      return invalid(REASONS.expiredToken, userAddress);
    const decide = (found: TokenClick): Judgement => {
      if (found === 'none') return invalid(REASONS.clickWithoutImpression, userAddress);
      if (found === 'late') return invalid(REASONS.expiredToken, userAddress);
      if (found === 'clicked') return invalid(REASONS.tokenReplay, userAddress);
      if (found === 'double') return invalid(REASONS.doubleClick, userAddress);
      // Claimed either way: a too fast click used the token's one click, so a second, slower one
      // from the same script is a replay rather than a billable click.
      return at - found < MIN_CLICK_DELAY_MS
        ? judged('invalid', REASONS.clickTooFast)
        : judged('counted', null);
    };
    const found = this.tokenStates.claimClick(id, at);
    return found instanceof Promise ? found.then(decide) : decide(found);
  }

  /**
   * Once a judged event is stored, or was not (`stored` null: the store refused or failed it, and
   * the partner may retry); `at` is the event's time, as judged. A pair: an impression judged
   * billable was made clickable at once, and is taken back unless it was stored as counted; a click
   * that consumed an impression gives it back unless it was stored as counted, so a replay (its
   * first attempt had one already) and a click that was never stored take nothing away. A serve
   * token: what the event claimed stays claimed if the store kept the event as its own (`counted`,
   * or `invalid` for a reason of its own), and is given back if it was not stored or was an
   * idempotent replay (`duplicate`: its first attempt is the one that used the token); an
   * impression not stored as counted cannot be clicked from now on.
   */
  settle(kind: EventKind, judged: Judgement, stored: Verdict | null, at: number): void | Promise<void> {
    if (judged.pair !== null) {
      if (kind === 'impression')
        return stored === 'counted' ? undefined : this.credits.retract(judged.pair, at);
      return this.settleClick(judged.pair, judged, stored, at);
    }
    if (judged.token === null) return;
    const kept = stored === 'counted' || stored === 'invalid';
    if (kind === 'impression') {
      return this.tokenStates.settleImpression(
        judged.token,
        !kept ? 'release' : stored === 'counted' ? at : 'unbillable',
      );
    }
    if (!kept) return this.tokenStates.releaseClick(judged.token);
  }

  /** `settle` for an untokened click. */
  private async settleClick(
    pair: string,
    judged: Judgement,
    stored: Verdict | null,
    at: number,
  ): Promise<void> {
    if (judged.consumed && stored !== 'counted') await this.credits.add(pair, at);
    if (judged.clicker !== null && (stored === null || stored === 'duplicate'))
      await this.credits.forgetClick(pair, at, judged.clicker);
  }
}
