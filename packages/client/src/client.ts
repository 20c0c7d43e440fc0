import { maxAgeMs, ResponseCache } from './cache.js';
import { Display, type TrackOptions, type Tracker } from './display.js';
import { assertServerSide } from './environment.js';
import { PlacardError, UsageError } from './errors.js';
import type { Campaign, FetchResponse } from './generated.js';
import { isAcknowledgement, isFetchResponse } from './response.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import { checkFetchArguments, checkTracking, type FetchArguments, type TrackingContext } from './rules.js';
import { timeOrderedKey } from './idempotency-keys.js';
import { call, type TransportOptions } from './transport.js';

export const VERSION = '0.1.0';

export interface ClientOptions {
  /** The partner's secret API key; keep it in server-side configuration. */
  apiKey: string;
  /** Placard's address, e.g. `https://ads.example.com`, or with a path: `https://example.com/placard`. */
  baseUrl: string;
  /** Per attempt, in milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** How 429, 5xx and network failures are retried. */
  retry?: Partial<RetryPolicy>;
  /** Reuse fetched campaigns for the `max-age` the server sends. Default true. */
  cache?: boolean;
  /**
   * Ask for serve tokens (D15): each fetched campaign carries a token for one page view, which its
   * display sends back with the impression and the click, so Placard bills exactly one impression
   * per display and one click after it. Every `fetchCampaigns` call then asks the server afresh
   * (never from the cache, never shared with another call in flight), and each fetched campaign
   * object can be displayed once: fetch once per page view. Default false.
   */
  tokens?: boolean;
  /** The platform `fetch` by default. */
  fetch?: typeof globalThis.fetch;
  /** For tests: the time source (ms), randomness in [0, 1), the wait between attempts, and idempotency keys. */
  clock?: () => number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  newIdempotencyKey?: () => string;
}

export interface FetchOptions {
  signal?: AbortSignal;
}

export interface TrackCallOptions extends TrackOptions {
  /** Reused across retries; a fresh one per call by default. Pass your own to make your own retries safe. */
  idempotencyKey?: string;
}

/**
 * Placard's address as a directory URL (its path ending in `/`), so that request paths resolve
 * under it: a service behind a proxy at `https://host/placard` is called at
 * `https://host/placard/api/v1/...`, not `https://host/api/v1/...`. A query or fragment would be
 * dropped from every request, so it is refused rather than ignored.
 */
function serviceRoot(value: string): string {
  const wrong = () =>
    new PlacardError(
      `baseUrl must be an absolute http(s) URL without query or fragment (got ${JSON.stringify(value)})`,
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw wrong();
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw wrong();
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // An AbortSignal's reason is the error abort() was given, or an AbortError.
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A Placard partner client that follows the contract by construction: arguments checked locally
 * with the server's rules, fetched campaigns cached for as long as the server allows, failed or
 * malformed responses never returned as data, typed errors, retries only where they can help, and
 * display handles that report one impression per display and clicks only after it.
 */
export class PlacardClient implements Tracker {
  private readonly transport: TransportOptions;
  private readonly cache: ResponseCache<readonly Campaign[]> | null;
  /** The placement each campaign object was fetched for: rendering it elsewhere is refused. */
  private readonly fetchedFor = new WeakMap<Campaign, string>();
  private readonly newIdempotencyKey: () => string;
  private readonly inFlight = new Map<string, Promise<readonly Campaign[]>>();
  private readonly tokens: boolean;
  /** Tokened campaign objects already given a display: their token is for one (D15). */
  private readonly displayed = new WeakSet<Campaign>();

  constructor(options: ClientOptions) {
    assertServerSide();
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new PlacardError('apiKey is required');
    }
    const clock = options.clock ?? Date.now;
    this.transport = {
      baseUrl: serviceRoot(options.baseUrl),
      apiKey: options.apiKey,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      retry: { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs ?? 5_000,
      clock,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? abortableSleep,
      userAgent: `placard-client/${VERSION}`,
    };
    this.cache = options.cache === false ? null : new ResponseCache(clock);
    this.newIdempotencyKey = options.newIdempotencyKey ?? (() => timeOrderedKey(clock()));
    this.tokens = options.tokens === true;
  }

  /** Running campaigns for a placement (partner API 4.1), from the cache while the server allows. */
  async fetchCampaigns(args: FetchArguments, options: FetchOptions = {}): Promise<readonly Campaign[]> {
    const checked = checkFetchArguments(args);
    const query = new URLSearchParams({ placement: checked.placement, limit: String(checked.limit) });
    if (checked.location !== undefined) query.set('location', checked.location);
    if (checked.device !== undefined) query.set('device', checked.device);
    // Tokens are for one page view, and an answer for a viewer (D20) is that user's: each such
    // call fetches its own, from the server.
    if (checked.viewer !== undefined) query.set('viewer', checked.viewer);
    if (this.tokens) query.set('tokens', 'true');
    if (this.tokens || checked.viewer !== undefined)
      return this.fetchFresh(query.toString(), checked.placement, options, false);
    const key = query.toString();
    const cached = this.cache?.get(key);
    if (cached !== undefined) return cached;
    // Identical fetches in flight share one request (a page rendering the same slot twice); one
    // with its own abort signal goes alone, so another caller's cancellation never reaches it.
    if (options.signal) return this.fetchFresh(key, checked.placement, options);
    const inFlight = this.inFlight.get(key);
    if (inFlight !== undefined) return inFlight;
    const fetching = this.fetchFresh(key, checked.placement, options).finally(() =>
      this.inFlight.delete(key),
    );
    this.inFlight.set(key, fetching);
    return fetching;
  }

  private async fetchFresh(
    key: string,
    placement: string,
    options: FetchOptions,
    cacheable = true,
  ): Promise<readonly Campaign[]> {
    const answer = await call(this.transport, {
      method: 'GET',
      path: `/api/v1/campaigns/fetch?${key}`,
      accept: isFetchResponse,
      ...(options.signal && { signal: options.signal }),
    });
    const campaigns = Object.freeze(
      (answer.body as FetchResponse).data.map((campaign) => Object.freeze(campaign)),
    );
    for (const campaign of campaigns) this.fetchedFor.set(campaign, placement);
    if (cacheable) this.cache?.set(key, campaigns, maxAgeMs(answer.headers.get('cache-control')));
    return campaigns;
  }

  /**
   * A handle for one showing of `campaign` in `placement`, which must be the placement it was
   * fetched for (partner API 1.7).
   */
  display(campaign: Campaign, placement: string, context: TrackingContext = {}): Display {
    const fetched = this.fetchedFor.get(campaign);
    if (fetched === undefined) {
      throw new UsageError(
        `campaign ${campaign.id} was not fetched by this client: fetch it for its placement first`,
      );
    }
    if (fetched !== placement) {
      throw new UsageError(
        `campaign ${campaign.id} was fetched for ${fetched}; it must not be rendered in ${placement}`,
      );
    }
    if (campaign.token !== undefined) {
      if (this.displayed.has(campaign)) {
        throw new UsageError(
          `campaign ${campaign.id} was displayed already: its serve token is for one display, so fetch again for another`,
        );
      }
      this.displayed.add(campaign);
    }
    return new Display(this, campaign, placement, context);
  }

  /** Reports an impression (partner API 4.2); prefer `display(...).impression()`, which reports once. */
  trackImpression(
    campaignId: number,
    placement: string,
    context?: TrackingContext,
    options?: TrackCallOptions,
  ): Promise<void> {
    return this.track('impression', campaignId, placement, context, options);
  }

  /** Reports a click (partner API 4.3); prefer `display(...).click()`, which requires the impression first. */
  trackClick(
    campaignId: number,
    placement: string,
    context?: TrackingContext,
    options?: TrackCallOptions,
  ): Promise<void> {
    return this.track('click', campaignId, placement, context, options);
  }

  /** Forgets cached fetches, e.g. after the operator changed campaigns. */
  clearCache(): void {
    this.cache?.clear();
  }

  private async track(
    kind: 'impression' | 'click',
    campaignId: number,
    placement: string,
    context: TrackingContext = {},
    options: TrackCallOptions = {},
  ): Promise<void> {
    const body = checkTracking(campaignId, placement, context);
    await call(this.transport, {
      method: 'POST',
      path: `/api/v1/campaigns/${kind}`,
      body,
      // One key for every attempt of this call: a retry after a lost answer is never counted twice.
      idempotencyKey: options.idempotencyKey ?? this.newIdempotencyKey(),
      accept: isAcknowledgement,
      ...(options.signal && { signal: options.signal }),
    });
  }
}
