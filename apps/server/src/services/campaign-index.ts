import { isInFlight, type Campaign } from '../domain/campaigns.js';
import { drawOrdered, groupByPriority, type PriorityGroup, type Random } from '../domain/lottery.js';
import type { FetchQuery } from '../domain/requests.js';
import { DEVICES } from '../domain/targeting.js';

/** A running campaign as the request path needs it, with its response JSON built once. */
export interface ServedCampaign {
  readonly id: number;
  readonly priority: number;
  readonly weight: number;
  readonly startAt: number | null;
  readonly endAt: number | null;
  readonly category: string | null;
  readonly placements: readonly string[];
  /** Has a total or daily cap: its events must update the cap counters as they are stored. */
  readonly hasCaps: boolean;
  /** The campaign object of the contract (2.1) as UTF-8 JSON: exactly its fields, nulls omitted. */
  readonly json: Buffer;
}

/** `any` holds every campaign (a request without `device`); the others only those that allow it. */
type DeviceKey = 'any' | (typeof DEVICES)[number];
type ListsByDevice = Record<DeviceKey, PriorityGroup<ServedCampaign>[]>;

interface PlacementLists {
  /** For a request without `location`: every campaign of the placement. */
  all: ListsByDevice;
  /** Campaigns with an empty country set (served everywhere). */
  everyCountry: ListsByDevice;
  /** Campaigns targeting specific countries, by country. Disjoint from `everyCountry`. */
  byCountry: Map<string, ListsByDevice>;
}

const DEVICE_KEYS: readonly DeviceKey[] = ['any', ...DEVICES];

/**
 * The JSON of one contract campaign object; `description` and `category` are omitted when absent
 * (D3). Encoded once per index build, so a response is a concatenation of ready bytes with no
 * per-request encoding (and no V8 string ropes kept alive).
 */
export function campaignJson(campaign: Campaign): Buffer {
  const object: Record<string, unknown> = { id: campaign.id, title: campaign.title };
  if (campaign.description !== null) object['description'] = campaign.description;
  if (campaign.category !== null) object['category'] = campaign.category;
  object['destinationUrl'] = campaign.destinationUrl;
  object['status'] = 'running';
  object['createdAt'] = new Date(campaign.createdAt).toISOString();
  return Buffer.from(JSON.stringify(object), 'utf8');
}

function bucket(
  byDevice: Map<DeviceKey, ServedCampaign[]>,
  campaign: Campaign,
  served: ServedCampaign,
): void {
  for (const key of DEVICE_KEYS) {
    if (key === 'any' || campaign.devices.length === 0 || campaign.devices.includes(key)) {
      const list = byDevice.get(key);
      if (list) list.push(served);
      else byDevice.set(key, [served]);
    }
  }
}

function freeze(byDevice: Map<DeviceKey, ServedCampaign[]> | undefined): ListsByDevice {
  const lists = {} as ListsByDevice;
  for (const key of DEVICE_KEYS) lists[key] = groupByPriority(byDevice?.get(key) ?? []);
  return lists;
}

interface Staging {
  all: Map<DeviceKey, ServedCampaign[]>;
  everyCountry: Map<DeviceKey, ServedCampaign[]>;
  byCountry: Map<string, Map<DeviceKey, ServedCampaign[]>>;
}

/**
 * Collects campaigns one by one (so the store can be read page by page and no full list of rows
 * is ever held) and then freezes them into a {@link CampaignIndex}.
 */
export class CampaignIndexBuilder {
  private readonly staging = new Map<string, Staging>();
  private readonly byId = new Map<number, ServedCampaign>();
  private nextBoundaryAt = Infinity;

  /** One string per placement id, shared by every campaign, instead of one per row read. */
  private readonly placementIds: ReadonlyMap<string, string>;

  constructor(
    private readonly placements: ReadonlySet<string>,
    private readonly now = Date.now(),
  ) {
    this.placementIds = new Map([...placements].map((id) => [id, id]));
  }

  add(campaign: Campaign): void {
    if (campaign.status !== 'running') return;
    if (campaign.endAt !== null && campaign.endAt <= this.now) return;
    // Held by a daily cap: left out, and the index is rebuilt when the hold ends.
    if (campaign.cappedUntil !== null && campaign.cappedUntil > this.now) {
      if (campaign.cappedUntil < this.nextBoundaryAt) this.nextBoundaryAt = campaign.cappedUntil;
      return;
    }
    for (const bound of [campaign.startAt, campaign.endAt]) {
      if (bound !== null && bound > this.now && bound < this.nextBoundaryAt) this.nextBoundaryAt = bound;
    }
    const served: ServedCampaign = {
      id: campaign.id,
      priority: campaign.priority,
      weight: campaign.weight,
      startAt: campaign.startAt,
      endAt: campaign.endAt,
      category: campaign.category,
      placements: campaign.placements.flatMap((p) => this.placementIds.get(p) ?? []),
      hasCaps: Object.values(campaign.caps).some((cap) => cap !== null),
      json: campaignJson(campaign),
    };
    this.byId.set(campaign.id, served);
    for (const placement of served.placements) {
      let lists = this.staging.get(placement);
      if (!lists) {
        lists = { all: new Map(), everyCountry: new Map(), byCountry: new Map() };
        this.staging.set(placement, lists);
      }
      bucket(lists.all, campaign, served);
      if (campaign.countries.length === 0) bucket(lists.everyCountry, campaign, served);
      for (const country of campaign.countries) {
        let byDevice = lists.byCountry.get(country);
        if (!byDevice) lists.byCountry.set(country, (byDevice = new Map<DeviceKey, ServedCampaign[]>()));
        bucket(byDevice, campaign, served);
      }
    }
  }

  build(): CampaignIndex {
    const byPlacement = new Map<string, PlacementLists>();
    for (const [placement, lists] of this.staging) {
      byPlacement.set(placement, {
        all: freeze(lists.all),
        everyCountry: freeze(lists.everyCountry),
        byCountry: new Map([...lists.byCountry].map(([country, byDevice]) => [country, freeze(byDevice)])),
      });
    }
    this.staging.clear();
    return new CampaignIndex(this.placements, this.byId, byPlacement, this.nextBoundaryAt);
  }
}

/**
 * An immutable snapshot of what can be served: enabled placements and running campaigns, bucketed by
 * placement, country and device so that a fetch touches only campaigns that match its targeting.
 * A new snapshot replaces the old one whole when the store changes (see `ServingState`).
 */
export class CampaignIndex {
  /** An index from a list of campaigns (tests, small data); the server builds page by page. */
  static from(
    placements: ReadonlySet<string>,
    campaigns: Iterable<Campaign>,
    now = Date.now(),
  ): CampaignIndex {
    const builder = new CampaignIndexBuilder(placements, now);
    for (const campaign of campaigns) builder.add(campaign);
    return builder.build();
  }

  readonly size: number;

  constructor(
    readonly placements: ReadonlySet<string>,
    private readonly byId: ReadonlyMap<number, ServedCampaign>,
    private readonly byPlacement: ReadonlyMap<string, PlacementLists>,
    /** Earliest future start or end time of an indexed campaign; a rebuild is due then. */
    readonly nextBoundaryAt: number,
  ) {
    this.size = byId.size;
  }

  hasPlacement(id: string): boolean {
    return this.placements.has(id);
  }

  /** A running, in-flight campaign by id, or undefined. */
  campaign(id: number, now = Date.now()): ServedCampaign | undefined {
    const campaign = this.byId.get(id);
    return campaign && isInFlight(campaign, now) ? campaign : undefined;
  }

  /**
   * The campaigns a fetch returns, in delivery order (D3, D4), leaving out `blocked` categories
   * (the partner's). The placement must be known.
   */
  select(
    query: FetchQuery,
    now = Date.now(),
    blocked: readonly string[] = [],
    random: Random = Math.random,
  ): ServedCampaign[] {
    const lists = this.byPlacement.get(query.placement);
    if (!lists) return [];
    const device: DeviceKey = query.device ?? 'any';
    const sources: PriorityGroup<ServedCampaign>[][] = [];
    if (query.location === undefined) {
      sources.push(lists.all[device]);
    } else {
      sources.push(lists.everyCountry[device]);
      const forCountry = lists.byCountry.get(query.location);
      if (forCountry) sources.push(forCountry[device]);
    }
    const eligible =
      blocked.length === 0
        ? (campaign: ServedCampaign) => isInFlight(campaign, now)
        : (campaign: ServedCampaign) =>
            isInFlight(campaign, now) && (campaign.category === null || !blocked.includes(campaign.category));
    // Without blocked categories, a group whose every campaign is in flight needs no per-item check.
    const groupEligible =
      blocked.length === 0
        ? (group: PriorityGroup<ServedCampaign>) =>
            group.allInFlightFrom <= now && now < group.allInFlightUntil
        : () => false;
    return drawOrdered(sources, query.limit, eligible, random, groupEligible);
  }
}
