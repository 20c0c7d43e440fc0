import { randomBytes } from 'node:crypto';
import { addressSource, isKnownBot, truncateAddress } from '../domain/end-user.js';
import type { TrackingRequest } from '../domain/requests.js';
import { MIN_CLICK_DELAY_MS, SERVE_TOKEN_TTL_MS, ServeTokens } from '../domain/serve-tokens.js';
import { BucketMap } from '../domain/token-bucket.js';
import { ADDRESS_RATE, CLICK_WINDOW_MS, REASONS, type Reason, type Verdict } from '../domain/verdicts.js';
import { MemoryClickCredits, type ClickCredits } from '../limits/click-credits.js';
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
   * The (API key, campaign, placement) pair whose unclicked impressions change once the event is
   * stored (see `TrafficJudge.settle`); null when nothing is to change.
   */
  pair: string | null;
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
});

/**
 * Decides each event's verdict on the request path, without a store round trip (D15): a known bot
 * user agent, then an end-user address past `ADDRESS_RATE`, then, for a click, no unclicked billable
 * impression of its pair in the window, make it `invalid` with that reason; anything else is
 * `counted`. The store may still make it a `duplicate` (an idempotent replay, D9).
 *
 * An event with a serve token is judged by its token instead of its pair (after the bot and
 * address checks): a token that does not verify, then one past its lifetime, then (impression) a
 * token whose impression was claimed already, or (click) a token without a billable impression in
 * the hour, clicked already, or clicked less than `MIN_CLICK_DELAY_MS` after its impression. Tokened
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
      return this.judgeToken(kind, request, request.token, apiKeyId, now, userAddress);
    const pair = `${apiKeyId}:${request.campaignId}:${request.placement}`;
    const counted: Judgement = { verdict: 'counted', reason: null, userAddress, pair, token: null };
    if (kind === 'impression') return counted;
    const found = this.credits.take(pair, now);
    const decide = (hit: boolean): Judgement =>
      hit ? counted : invalid(REASONS.clickWithoutImpression, userAddress);
    return typeof found === 'boolean' ? decide(found) : found.then(decide);
  }

  /** The serve-token half of `judge`. */
  private judgeToken(
    kind: EventKind,
    request: TrackingRequest,
    token: string,
    apiKeyId: number,
    now: number,
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
    });
    if (kind === 'impression') {
      if (now > issuedAt + SERVE_TOKEN_TTL_MS) return invalid(REASONS.expiredToken, userAddress);
      const claimed = this.tokenStates.claimImpression(id, now);
      const decide = (first: boolean): Judgement =>
        first ? judged('counted', null) : invalid(REASONS.tokenReplay, userAddress);
      return typeof claimed === 'boolean' ? decide(claimed) : claimed.then(decide);
    }
    // The latest a token's click can be billed: its impression's latest time, and that one's hour.
    if (now > issuedAt + SERVE_TOKEN_TTL_MS + CLICK_WINDOW_MS)
      return invalid(REASONS.expiredToken, userAddress);
    const decide = (found: TokenClick): Judgement => {
      if (found === 'none') return invalid(REASONS.clickWithoutImpression, userAddress);
      if (found === 'late') return invalid(REASONS.expiredToken, userAddress);
      if (found === 'clicked') return invalid(REASONS.tokenReplay, userAddress);
      // Claimed either way: a too fast click used the token's one click, so a second, slower one
      // from the same script is a replay rather than a billable click.
      return now - found < MIN_CLICK_DELAY_MS
        ? judged('invalid', REASONS.clickTooFast)
        : judged('counted', null);
    };
    const found = this.tokenStates.claimClick(id, now);
    return found instanceof Promise ? found.then(decide) : decide(found);
  }

  /**
   * Once a judged event is stored, or was not (`stored` null: the store refused or failed it, and
   * the partner may retry). A pair: an impression stored as counted can be clicked from now on; a
   * click that consumed an impression gives it back unless it was stored as counted, so a replay
   * (its first attempt had one already) and a click that was never stored take nothing away. A
   * serve token: what the event claimed stays claimed if the store kept the event as its own
   * (`counted`, or `invalid` for a reason of its own), and is given back if it was not stored or
   * was an idempotent replay (`duplicate`: its first attempt is the one that used the token); an
   * impression stored as counted can be clicked from now on.
   */
  settle(kind: EventKind, judged: Judgement, stored: Verdict | null, now: number): void | Promise<void> {
    if (judged.pair !== null) {
      if (kind === 'impression' ? stored === 'counted' : stored !== 'counted') {
        return this.credits.add(judged.pair, now);
      }
      return;
    }
    if (judged.token === null) return;
    const kept = stored === 'counted' || stored === 'invalid';
    if (kind === 'impression') {
      return this.tokenStates.settleImpression(
        judged.token,
        !kept ? 'release' : stored === 'counted' ? now : 'unbillable',
      );
    }
    if (!kept) return this.tokenStates.releaseClick(judged.token);
  }
}
