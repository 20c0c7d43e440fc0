import type { Campaign, Totals } from '../domain/campaigns.js';
import type { Micros } from '../domain/money.js';
import type { Pace, PacedUnit } from '../domain/pacing.js';
import { localDate, startOfThisLocalDay } from '../domain/time-zones.js';
import type {
  CampaignDelivery,
  CampaignFilter,
  CampaignSort,
  NumberedPage,
  NumberedPageRequest,
  Store,
} from '../store/store.js';
import type { Actor } from './audit.js';
import { CampaignService } from './campaigns.js';

/** The orders the list is offered in, for the pages that read one from a request. */
export { CAMPAIGN_SORTS, type CampaignSort, type CampaignSortKey } from '../store/store.js';

/** How far a campaign is into one of its caps, in the period the cap counts. */
export interface CapProgress {
  units: 'impressions' | 'clicks';
  period: 'today' | 'total';
  /** Counted against the cap, as the commit that holds it counts. */
  used: number;
  cap: number;
}

/** Where an evenly paced campaign stands against its plan (D16), as this instance last decided. */
export type PacingProgress =
  | { state: 'held'; delivered: number; planned: number; cap: number; unit: PacedUnit; releasedAt: number }
  | { state: 'behind'; weightFactor: number }
  | { state: 'on plan' };

/** One row of the campaigns list: the campaign with what the operator manages it by. */
export interface CampaignListRow {
  campaign: Campaign;
  advertiserName: string;
  delivery: CampaignDelivery;
  caps: CapProgress[];
  /** For a running campaign that paces evenly. */
  pacing?: PacingProgress;
}

/**
 * The campaigns list (the dashboard's Campaigns page): one page of the campaigns the actor may see,
 * filtered and sorted, each with its advertiser's name, its delivery today and in total, its spend, its caps'
 * progress and its pacing. A fixed number of queries per page whatever its size or the number of
 * campaigns: the page, the names, the delivery, the cap counters.
 */
export class CampaignList {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor,
    private readonly clock: () => number,
    private readonly paceOf: (id: number) => Pace,
  ) {}

  async page(
    filter: CampaignFilter,
    request: NumberedPageRequest,
    sort?: CampaignSort,
  ): Promise<NumberedPage<CampaignListRow>> {
    const page = await new CampaignService(this.store, this.actor, this.clock).page(filter, request, sort);
    const now = this.clock();
    const campaigns = page.rows;
    const today = new Map(campaigns.map((c) => [c.id, localDate(now, c.timeZone)]));
    const capped = campaigns.filter((c) => Object.values(c.caps).some((cap) => cap !== null));
    const [names, delivery, counters] = await Promise.all([
      this.store.advertiserNames(campaigns.map((c) => c.advertiserId)),
      this.store.campaignDelivery(
        campaigns.map((c) => ({ id: c.id, todayFrom: startOfThisLocalDay(now, c.timeZone) })),
      ),
      this.store.capCounters(
        capped.flatMap((c) => [
          { campaignId: c.id, day: 'total' },
          { campaignId: c.id, day: today.get(c.id)! },
        ]),
      ),
    ]);
    const none: Totals = { impressions: 0, clicks: 0 };
    const rows = campaigns.map((campaign): CampaignListRow => {
      const counted = (day: string) => counters.get(`${campaign.id}:${day}`) ?? none;
      const pacing = this.pacing(campaign);
      return {
        campaign,
        advertiserName: names.get(campaign.advertiserId) ?? `#${campaign.advertiserId}`,
        delivery: delivery.get(campaign.id) ?? { today: none, total: none, spendMicros: 0 as Micros },
        caps: capProgress(campaign, counted(today.get(campaign.id)!), counted('total')),
        ...(pacing && { pacing }),
      };
    });
    return { rows, total: page.total };
  }

  private pacing(campaign: Campaign): PacingProgress | undefined {
    if (campaign.pacing !== 'even' || campaign.status !== 'running') return undefined;
    const pace = this.paceOf(campaign.id);
    if (pace.held && pace.hold) return { state: 'held', ...pace.hold };
    if (pace.weightFactor > 1) return { state: 'behind', weightFactor: pace.weightFactor };
    return { state: 'on plan' };
  }
}

/** Each cap the campaign has, with what its counter holds: daily ones for today, total ones overall. */
export function capProgress(campaign: Campaign, today: Totals, total: Totals): CapProgress[] {
  const { caps } = campaign;
  const progress: CapProgress[] = [];
  const add = (
    units: CapProgress['units'],
    period: CapProgress['period'],
    cap: number | null,
    used: number,
  ) => {
    if (cap !== null) progress.push({ units, period, used, cap });
  };
  add('impressions', 'today', caps.impressionsDaily, today.impressions);
  add('clicks', 'today', caps.clicksDaily, today.clicks);
  add('impressions', 'total', caps.impressionsTotal, total.impressions);
  add('clicks', 'total', caps.clicksTotal, total.clicks);
  return progress;
}
