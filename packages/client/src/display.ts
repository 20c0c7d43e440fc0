import { UsageError } from './errors.js';
import type { Campaign } from './generated.js';
import type { TrackingContext } from './rules.js';

export interface TrackOptions {
  signal?: AbortSignal;
}

/** What a display needs from the client: the two tracking calls. */
export interface Tracker {
  trackImpression(
    campaignId: number,
    placement: string,
    context?: TrackingContext,
    options?: TrackOptions,
  ): Promise<void>;
  trackClick(
    campaignId: number,
    placement: string,
    context?: TrackingContext,
    options?: TrackOptions,
  ): Promise<void>;
}

/**
 * One showing of one campaign in one placement (partner API sections 1.6 and 1.7), created by
 * `client.display(campaign, placement)`: it reports at most one impression, whatever re-renders
 * call, and refuses a click before that impression was recorded. A campaign fetched with
 * `tokens: true` sends its serve token with both (D15).
 */
export class Display {
  private impressionReported: Promise<void> | undefined;
  /** The caller's context, with the campaign's serve token when it has one. */
  private readonly context: TrackingContext;

  constructor(
    private readonly tracker: Tracker,
    readonly campaign: Campaign,
    readonly placement: string,
    context: TrackingContext = {},
  ) {
    this.context =
      campaign.token === undefined || context.token !== undefined
        ? context
        : { ...context, token: campaign.token };
  }

  /**
   * Reports the impression, once the campaign is visible. Calling it again returns the first call's
   * promise and sends nothing: one impression per display.
   */
  impression(options?: TrackOptions): Promise<void> {
    this.impressionReported ??= this.tracker.trackImpression(
      this.campaign.id,
      this.placement,
      this.context,
      options,
    );
    return this.impressionReported;
  }

  /** Whether `impression()` was called (it may still be in flight). */
  get impressionStarted(): boolean {
    return this.impressionReported !== undefined;
  }

  /**
   * Reports a click: call it only for a genuine user action, then send the user to
   * `campaign.destinationUrl`. Waits for an impression still in flight; refuses without one.
   */
  async click(options?: TrackOptions): Promise<void> {
    if (this.impressionReported === undefined) {
      throw new UsageError(
        `no click before the impression: call impression() first (campaign ${this.campaign.id})`,
      );
    }
    try {
      await this.impressionReported;
    } catch (error) {
      throw new UsageError(
        `the impression of campaign ${this.campaign.id} was not recorded, so no click is`,
        null,
        {
          cause: error,
        },
      );
    }
    await this.tracker.trackClick(this.campaign.id, this.placement, this.context, options);
  }
}
