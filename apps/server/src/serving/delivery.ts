import { randomBytes } from 'node:crypto';
import { invalid, notFound } from '../domain/errors.js';
import { chargesPerEvent } from '../domain/prices.js';
import { DEFAULT_EVENT_TIME_WINDOW_MS, eventTime } from '../domain/event-time.js';
import { SERVE_TOKEN_NONCE_BYTES } from '../domain/serve-tokens.js';
import type { KeyPolicies } from '../domain/rate-limits.js';
import { isBlocked, type PartnerBlocks } from '../domain/partner-blocks.js';
import { MAX_LIMIT, type FetchQuery, type TrackingRequest } from '../domain/requests.js';
import type { EventSink } from '../ingest/event-sink.js';
import { REASONS, type Verdict } from '../domain/verdicts.js';
import type { EventKind } from '../store/store.js';
import type { CampaignIndex, ServedCampaign } from './campaign-index.js';
import { MemoryViewerFrequency, type ViewerFrequency } from '../limits/viewer-frequency.js';
import { ViewerKeys } from '../domain/viewer-keys.js';
import type { ServingState } from './serving-state.js';
import { RecentTraffic } from './recent-traffic.js';
import { TrafficJudge } from './traffic-judge.js';

const ENVELOPE_OPEN = Buffer.from('{"status":"success","data":[');
const COMMA = Buffer.from(',');
/** What ends a campaign object that carries a serve token, before the token and after it. */
const TOKEN_OPEN = Buffer.from(',"token":"');
const TOKEN_CLOSE = Buffer.from('"}');
/** The end of a fetch body for each possible count, built once. */
const ENVELOPE_CLOSE = Array.from({ length: MAX_LIMIT + 1 }, (_, count) =>
  Buffer.from(`],"count":${count}}`),
);

/** Who is calling, as established by authentication, with what its partner never receives. */
export interface Caller extends PartnerBlocks {
  partnerId: number;
  apiKeyId: number;
  /** The key's rate limits (D7). */
  policies: KeyPolicies;
}

/**
 * The three partner operations. Fetch reads only the in-memory index; tracking validates against
 * the same index and then waits for the event to be stored.
 */
export class DeliveryService {
  constructor(
    private readonly state: ServingState,
    private readonly events: EventSink,
    private readonly clock: () => number = Date.now,
    private readonly judge: TrafficJudge = new TrafficJudge(),
    /** Told of every event stored but replays, for the key flag job (D15). */
    private readonly traffic: RecentTraffic = new RecentTraffic(),
    /** How old a partner's `occurredAt` may be (`PLACARD_EVENT_TIME_WINDOW_MS`). */
    private readonly eventTimeWindowMs: number = DEFAULT_EVENT_TIME_WINDOW_MS,
    /** What each viewer was shown of frequency-capped campaigns (D20). */
    private readonly viewers: ViewerFrequency = new MemoryViewerFrequency(),
    /** Turns a partner's `viewer` into the only form of it kept (D20). */
    private readonly viewerKeys: ViewerKeys = new ViewerKeys(randomBytes(32)),
  ) {}

  /** The request in flight for each (API key, Idempotency-Key), which later ones wait for. */
  private readonly claims = new Map<string, Promise<void>>();

  /**
   * The fetch response body (partner API 2.3), as UTF-8 JSON bytes. With `tokens=true` (D15) each
   * campaign object also carries its serve token, spliced in before its closing brace (base64url
   * needs no escaping); without, the pre-serialised objects are sent as they are.
   */
  fetch(query: FetchQuery, caller: Caller): Buffer | Promise<Buffer> {
    const index = this.state.index;
    if (!index.hasPlacement(query.placement)) throw invalid(`unknown placement: ${query.placement}`);
    const now = this.clock();
    // Only with a viewer, and only while some campaign has frequency caps, is anything looked up
    // (D20): the default fetch stays a read of the index alone.
    if (query.viewer === undefined || !index.hasFrequencyCaps)
      return this.body(index.select(query, now, caller), query, caller, now);
    const viewer = this.viewerKeys.of(caller.partnerId, query.viewer);
    const reached = this.viewers.reached(
      viewer,
      (id) => index.campaign(id, now)?.frequencyCaps ?? undefined,
      now,
    );
    return reached instanceof Promise
      ? reached.then((found) => this.answerViewer(index, query, caller, now, viewer, found))
      : this.answerViewer(index, query, caller, now, viewer, reached);
  }

  /**
   * `fetch` for a viewer once the campaigns it reached a frequency cap of are known: those left out,
   * and the capped campaigns answered held for the viewer until their impressions arrive, so that
   * another page view fetching meanwhile (a second tab, perhaps through another instance) is not
   * given what this one will show. A campaign that other page view held first is drawn again
   * without it, once; still refused, it is left out of the answer. Synchronous while the viewers
   * are in this instance's memory (no promise for the common case), a promise with Redis.
   */
  private answerViewer(
    index: CampaignIndex,
    query: FetchQuery,
    caller: Caller,
    now: number,
    viewer: string,
    excluded: ReadonlySet<number>,
    /** On the second draw, what the first held: not held twice. */
    heldBefore: ReadonlySet<number> | null = null,
  ): Buffer | Promise<Buffer> {
    const campaigns = index.select(query, now, caller, Math.random, excluded);
    const toHold =
      heldBefore === null ? campaigns : campaigns.filter((campaign) => !heldBefore.has(campaign.id));
    if (!toHold.some((campaign) => campaign.frequencyCaps !== null))
      return this.body(campaigns, query, caller, now);
    const refused = this.viewers.hold(viewer, toHold, now);
    // The common case, nothing refused from memory, answered at once.
    if (!(refused instanceof Promise) && refused.length === 0)
      return this.body(campaigns, query, caller, now);
    const answer = (refused: readonly number[]): Buffer | Promise<Buffer> => {
      if (refused.length === 0) return this.body(campaigns, query, caller, now);
      const kept = campaigns.filter((campaign) => !refused.includes(campaign.id));
      if (heldBefore !== null) return this.body(kept, query, caller, now);
      const held = new Set(kept.filter((campaign) => campaign.frequencyCaps !== null).map(({ id }) => id));
      return this.answerViewer(index, query, caller, now, viewer, new Set([...excluded, ...refused]), held);
    };
    return refused instanceof Promise ? refused.then(answer) : answer(refused);
  }

  /** The answer's bytes for these campaigns, each with a serve token when the query asks for them. */
  private body(campaigns: readonly ServedCampaign[], query: FetchQuery, caller: Caller, now: number): Buffer {
    const parts: Buffer[] = [ENVELOPE_OPEN];
    const nonces = query.tokens === true ? randomBytes(SERVE_TOKEN_NONCE_BYTES * campaigns.length) : null;
    for (let i = 0; i < campaigns.length; i++) {
      if (i > 0) parts.push(COMMA);
      const campaign = campaigns[i] as ServedCampaign;
      if (nonces === null) parts.push(campaign.json);
      else {
        const nonce = nonces.subarray(i * SERVE_TOKEN_NONCE_BYTES, (i + 1) * SERVE_TOKEN_NONCE_BYTES);
        const token = this.judge.tokens.issue(caller.apiKeyId, campaign.id, query.placement, now, nonce);
        parts.push(campaign.json.subarray(0, -1), TOKEN_OPEN, Buffer.from(token, 'latin1'), TOKEN_CLOSE);
      }
    }
    parts.push(ENVELOPE_CLOSE[campaigns.length] as Buffer);
    return Buffer.concat(parts);
  }

  /**
   * Records an impression or click; resolves once it is durably stored. A request repeating an
   * `idempotencyKey` already used with the same API key in 24 hours is stored as a duplicate (D9),
   * or, if it asks for something else than the key's first request, refused (422) and not stored;
   * requests sharing a key in flight wait for one another, so only the key's first is judged.
   * Every other event gets its verdict from the traffic judge (D15): `counted`, or `invalid` with
   * a reason. Whatever the verdict, the answer is the same. The event is judged, and counted for
   * the key flag job, at its `occurredAt` when the partner gave one (bounded, `domain/event-time.ts`),
   * so a backlog sent late keeps its real pace; the raw event keeps its receipt time too.
   */
  async track(
    kind: EventKind,
    request: TrackingRequest,
    caller: Caller,
    idempotencyKey: string | null = null,
  ): Promise<void> {
    const now = this.clock();
    const index = this.state.index;
    if (!index.hasPlacement(request.placement)) throw invalid(`unknown placement: ${request.placement}`);
    const campaign = index.campaign(request.campaignId, now);
    // A campaign in a category or of an advertiser the partner blocks is one it can never have been shown.
    if (!campaign || isBlocked(campaign, caller)) {
      throw notFound('campaign not found');
    }
    if (!campaign.placements.includes(request.placement)) {
      throw invalid(`campaign ${request.campaignId} is not served in placement ${request.placement}`);
    }
    if (idempotencyKey === null) return this.judgeAndStore(kind, request, caller, null, campaign, now);
    // Requests sharing a key are taken one at a time, so only the one that claims the key is judged
    // as itself: one refused later (422) never left a credit a concurrent click could bill against.
    const claim = `${caller.apiKeyId}:${idempotencyKey}`;
    for (let ahead = this.claims.get(claim); ahead !== undefined; ahead = this.claims.get(claim)) {
      await ahead.catch(() => undefined);
    }
    const mine = this.judgeAndStore(kind, request, caller, idempotencyKey, campaign, this.clock());
    this.claims.set(claim, mine);
    try {
      await mine;
    } finally {
      if (this.claims.get(claim) === mine) this.claims.delete(claim);
    }
  }

  /** `track` once the request is valid: judges the event (D15) and stores it with its verdict. */
  private async judgeAndStore(
    kind: EventKind,
    request: TrackingRequest,
    caller: Caller,
    idempotencyKey: string | null,
    campaign: ServedCampaign,
    now: number,
  ): Promise<void> {
    const at = eventTime(request.occurredAt, now, this.eventTimeWindowMs);
    const judging = this.judge.judge(kind, request, caller.apiKeyId, now, at);
    let judged = judging instanceof Promise ? await judging : judging;
    // An impression the judge found billable, of a campaign with frequency caps, shown to a viewer
    // the partner named (D20): remembered for the viewer at once, or not billed past a cap.
    let viewer: string | null = null;
    if (
      kind === 'impression' &&
      judged.verdict === 'counted' &&
      request.viewer !== undefined &&
      campaign.frequencyCaps !== null
    ) {
      viewer = this.viewerKeys.of(caller.partnerId, request.viewer);
      const reserving = this.viewers.reserve(viewer, campaign.id, campaign.frequencyCaps, at);
      if (!(reserving instanceof Promise ? await reserving : reserving)) {
        judged = { ...judged, verdict: 'invalid', reason: REASONS.pastFrequencyCap };
        viewer = null;
      }
    }
    let stored: Verdict | null = null;
    try {
      stored = await this.events.record({
        kind,
        campaignId: request.campaignId,
        placement: request.placement,
        country: request.location ?? null,
        device: request.device ?? null,
        partnerId: caller.partnerId,
        apiKeyId: caller.apiKeyId,
        occurredAt: now,
        eventAt: request.occurredAt === undefined ? null : at,
        verdict: judged.verdict,
        reason: judged.reason,
        idempotencyKey,
        userAddress: judged.userAddress,
        viewer: request.viewer !== undefined,
        mayHitCap: campaign.hasCaps,
        priced: chargesPerEvent(campaign.price, kind),
      });
      if (stored !== 'duplicate') {
        // Judged billable but stored invalid: a limit the commit found reached, a cap or a budget. The
        // sink says only the verdict, so both are kept as `past cap` here; the key flags read neither.
        const reason = stored === 'counted' ? '' : (judged.reason ?? REASONS.pastCap);
        const { apiKeyId, partnerId } = caller;
        const event = { apiKeyId, partnerId, placement: request.placement, kind, reason };
        this.traffic.record(event, at, judged.userAddress);
      }
    } finally {
      // Also when the store refused or failed it (422, 503): a click's impression is given back,
      // so the partner's retry is judged as the first attempt would have been.
      // A serve token's claim likewise (D15), and the viewer's impression (D20).
      if (judged.pair !== null || judged.token !== null) await this.judge.settle(kind, judged, stored, at);
      if (viewer !== null && stored !== 'counted') await this.viewers.release(viewer, campaign.id, at);
    }
  }
}
