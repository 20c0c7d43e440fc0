import { addressSource, isKnownBot, truncateAddress } from '../domain/end-user.js';
import type { TrackingRequest } from '../domain/requests.js';
import { BucketMap } from '../domain/token-bucket.js';
import { ADDRESS_RATE, REASONS, type Reason, type Verdict } from '../domain/verdicts.js';
import { MemoryClickCredits, type ClickCredits } from '../limits/click-credits.js';
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
}

/** End-user addresses whose rates are kept at most; past it the oldest go. */
const MAX_ADDRESSES = 100_000;

const invalid = (reason: Reason, userAddress: string | null): Judgement => ({
  verdict: 'invalid',
  reason,
  userAddress,
  pair: null,
});

/**
 * Decides each event's verdict on the request path, without a store round trip (D15): a known bot
 * user agent, then an end-user address past `ADDRESS_RATE`, then, for a click, no unclicked billable
 * impression of its pair in the window, make it `invalid` with that reason; anything else is
 * `counted`. The store may still make it a `duplicate` (an idempotent replay, D9).
 */
export class TrafficJudge {
  private readonly addresses = new BucketMap<string>(MAX_ADDRESSES);

  constructor(private readonly credits: ClickCredits = new MemoryClickCredits()) {}

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
    const pair = `${apiKeyId}:${request.campaignId}:${request.placement}`;
    const counted: Judgement = { verdict: 'counted', reason: null, userAddress, pair };
    if (kind === 'impression') return counted;
    const found = this.credits.take(pair, now);
    const decide = (hit: boolean): Judgement =>
      hit ? counted : invalid(REASONS.clickWithoutImpression, userAddress);
    return typeof found === 'boolean' ? decide(found) : found.then(decide);
  }

  /**
   * Once a `counted` event is stored, or was not (`stored` null: the store refused or failed it,
   * and the partner may retry): an impression stored as counted can be clicked from now on; a
   * click that consumed an impression gives it back unless it was stored as counted, so a replay
   * (its first attempt had one already) and a click that was never stored take nothing away.
   */
  settle(kind: EventKind, pair: string, stored: Verdict | null, now: number): void | Promise<void> {
    if (kind === 'impression' ? stored === 'counted' : stored !== 'counted') {
      return this.credits.add(pair, now);
    }
  }
}
