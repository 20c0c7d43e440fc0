import type { FrequencyCap } from '../domain/frequency-caps.js';
import { HELD_UNTIL_RAISED } from '../domain/advertiser-budgets.js';
import { isInFlight, type Campaign } from '../domain/campaigns.js';
import type { Price } from '../domain/prices.js';
import { runsInHour, weekHours, WeekClocks, type WeekClock } from '../domain/schedules.js';
import { UNPACED, type Pace } from '../domain/pacing.js';
import {
  addToGroups,
  drawOrdered,
  groupByPriority,
  removeFromGroups,
  type PriorityGroup,
  type Random,
} from '../domain/lottery.js';
import type { FetchQuery } from '../domain/requests.js';
import { blocksAnything, isBlocked, NO_BLOCKS, type PartnerBlocks } from '../domain/partner-blocks.js';
import { DEVICES, type Device } from '../domain/targeting.js';

/** A running campaign as the request path needs it, with its response JSON built once. */
export interface ServedCampaign {
  readonly id: number;
  /** Whose it is: a partner that blocks the advertiser is never served it. */
  readonly advertiserId: number;
  readonly priority: number;
  readonly weight: number;
  readonly startAt: number | null;
  readonly endAt: number | null;
  readonly category: string | null;
  readonly placements: readonly string[];
  /** Its targeting (empty: every country, every device): where it is bucketed, to take it out. */
  readonly countries: readonly string[];
  readonly devices: readonly Device[];
  /** The chance a fetch that could return it does (D16: its pace releases it gradually); 1 mostly. */
  readonly chance: number;
  /** Has a total or daily cap: its events must update the cap counters as they are stored. */
  readonly hasCaps: boolean;
  /** Its price in force (D18): whether its events of a kind cost something as they are stored. */
  readonly price: Price | null;
  /** At most so many impressions per viewer per hour, day or week (D20); null for none. */
  readonly frequencyCaps: readonly FrequencyCap[] | null;
  /** Runs only in some hours of the week (dayparting): `hours` is then set. */
  readonly scheduled: boolean;
  /** Its hours of the week as a bitset, with its time zone's clock; null: every hour. */
  readonly hours: ScheduledHours | null;
  /** The campaign object of the contract (2.1) as UTF-8 JSON: exactly its fields, nulls omitted. */
  readonly json: Buffer;
}

/** No campaign: what a fetch without a viewer, or whose viewer reached no cap, leaves out. */
const NOTHING: ReadonlySet<number> = new Set();
/** The hours a campaign may run (`domain/schedules.ts`) and the clock of its time zone, shared. */
interface ScheduledHours {
  readonly bits: Uint32Array;
  readonly clock: WeekClock;
}

/** Whether a campaign may run at `now` by its schedule: one bit, its zone's hour worked out once a quarter hour. */
const inHours = (campaign: ServedCampaign, now: number): boolean =>
  campaign.hours === null || runsInHour(campaign.hours.bits, campaign.hours.clock.hourOfWeek(now));

/** `any` holds every campaign (a request without `device`); the others only those that allow it. */
type DeviceKey = 'any' | Device;
type ListsByDevice = Record<DeviceKey, PriorityGroup<ServedCampaign>[]>;

/** A placement's campaigns by targeting; `L` is a staging map while building, frozen lists after. */
interface ByTargeting<L> {
  /** For a request without `location`: every campaign of the placement. */
  all: L;
  /** Campaigns with an empty country set (served everywhere). */
  everyCountry: L;
  /** Campaigns targeting specific countries, by country. Disjoint from `everyCountry`. */
  byCountry: Map<string, L>;
}
type PlacementLists = ByTargeting<ListsByDevice>;

const DEVICE_KEYS: readonly DeviceKey[] = ['any', ...DEVICES];

/** The device keys whose lists hold a campaign with these devices (`any` always). */
function deviceKeysOf(devices: readonly Device[]): DeviceKey[] {
  return DEVICE_KEYS.filter((key) => key === 'any' || devices.length === 0 || devices.includes(key));
}

/** The lists of one placement a campaign with these countries belongs to, made when missing. */
function listsFor<L>(lists: ByTargeting<L>, countries: readonly string[], empty: () => L): L[] {
  const found = [lists.all];
  if (countries.length === 0) found.push(lists.everyCountry);
  for (const country of countries) {
    let byDevice = lists.byCountry.get(country);
    if (!byDevice) lists.byCountry.set(country, (byDevice = empty()));
    found.push(byDevice);
  }
  return found;
}

const emptyLists = (): ListsByDevice =>
  Object.fromEntries(DEVICE_KEYS.map((key) => [key, []])) as unknown as ListsByDevice;

/** Within a priority group, campaigns keep id order: the order a full build reads them in. */
const byId = (a: ServedCampaign, b: ServedCampaign): boolean => a.id < b.id;

/** A time at which a campaign must be looked at again: its start, its end, or its cap hold ending. */
interface Boundary {
  at: number;
  id: number;
}

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

function freeze(byDevice: Map<DeviceKey, ServedCampaign[]>): ListsByDevice {
  const lists = {} as ListsByDevice;
  for (const key of DEVICE_KEYS) lists[key] = groupByPriority(byDevice.get(key) ?? []);
  return lists;
}

const NONE: readonly never[] = Object.freeze([]);

/** Decides how a campaign stands in an index at `now`, shared by the full build and in-place updates. */
class Admission {
  /** One string per placement id, shared by every campaign, instead of one per row read. */
  private readonly placementIds: ReadonlyMap<string, string>;

  /** Likewise one string per country code. */
  private readonly countryIds = new Map<string, string>();

  /** One local clock per time zone, for the campaigns with a schedule. */
  private readonly clocks = new WeekClocks();

  constructor(placements: ReadonlySet<string>) {
    this.placementIds = new Map([...placements].map((id) => [id, id]));
  }

  private shared(country: string): string {
    const known = this.countryIds.get(country);
    if (known !== undefined) return known;
    this.countryIds.set(country, country);
    return country;
  }

  /**
   * The campaign as served, or null when it is not (not running, ended); and the future instants
   * at which that answer can change, pushed to `boundaries`. Its `pace` (D16, `PacingJob`)
   * multiplies its weight; whether it is drawn is the caller's (see {@link Admission.drawn}).
   */
  admit(
    campaign: Campaign,
    now: number,
    boundaries: Boundary[],
    pace: Pace = UNPACED,
  ): ServedCampaign | null {
    if (campaign.status !== 'running') return null;
    if (campaign.endAt !== null && campaign.endAt <= now) return null;
    // Held by a daily cap: looked at again when the hold ends.
    if (campaign.cappedUntil !== null && campaign.cappedUntil > now)
      boundaries.push({ at: campaign.cappedUntil, id: campaign.id });
    // Held by its advertiser's monthly budget: looked at again when the month ends. A total
    // budget's hold ends only by a change, which the change feed brings.
    const heldUntil = campaign.budgetHeldUntil;
    if (heldUntil !== null && heldUntil > now && heldUntil !== HELD_UNTIL_RAISED)
      boundaries.push({ at: heldUntil, id: campaign.id });
    for (const bound of [campaign.startAt, campaign.endAt]) {
      if (bound !== null && bound > now) boundaries.push({ at: bound, id: campaign.id });
    }
    return {
      id: campaign.id,
      advertiserId: campaign.advertiserId,
      priority: campaign.priority,
      // Weights are packed as 32-bit integers for the draw (domain/lottery.ts).
      weight: Math.min(0xffff_ffff, campaign.weight * pace.weightFactor),
      chance: pace.chance,
      startAt: campaign.startAt,
      endAt: campaign.endAt,
      category: campaign.category,
      placements: campaign.placements.flatMap((p) => this.placementIds.get(p) ?? []),
      countries: campaign.countries.length === 0 ? NONE : campaign.countries.map((c) => this.shared(c)),
      devices: campaign.devices.length === 0 ? NONE : campaign.devices,
      hasCaps: Object.values(campaign.caps).some((cap) => cap !== null),
      price: campaign.price,
      frequencyCaps: campaign.frequencyCaps.length === 0 ? null : campaign.frequencyCaps,
      scheduled: campaign.schedule !== null,
      hours:
        campaign.schedule === null
          ? null
          : { bits: weekHours(campaign.schedule), clock: this.clocks.of(campaign.timeZone) },
      json: campaignJson(campaign),
    };
  }

  /**
   * Whether an admitted campaign is drawn by fetches. One held by its daily cap, its advertiser's
   * budget (D18) or its pacing (D16) is not, but stays running and known to the index: an event shown from an earlier answer
   * is still tracked (the store decides whether it is past the cap, D15), not refused as unknown.
   */
  static drawn(campaign: Campaign, now: number, pace: Pace): boolean {
    const holds = (until: number | null) => until !== null && until > now;
    return !pace.held && !holds(campaign.cappedUntil) && !holds(campaign.budgetHeldUntil);
  }
}

/**
 * Collects campaigns one by one (so the store can be read page by page and no full list of rows
 * is ever held) and then freezes them into a {@link CampaignIndex}: the full build, at start and
 * when the change feed cannot say which campaigns changed.
 */
export class CampaignIndexBuilder {
  private readonly staging = new Map<string, ByTargeting<Map<DeviceKey, ServedCampaign[]>>>();
  private readonly byId = new Map<number, ServedCampaign>();
  private readonly held = new Map<number, ServedCampaign>();
  private readonly boundaries: Boundary[] = [];
  private readonly admission: Admission;

  constructor(
    private readonly placements: ReadonlySet<string>,
    private readonly now = Date.now(),
  ) {
    this.admission = new Admission(placements);
  }

  add(campaign: Campaign, pace: Pace = UNPACED): void {
    const served = this.admission.admit(campaign, this.now, this.boundaries, pace);
    if (!served) return;
    if (!Admission.drawn(campaign, this.now, pace)) {
      this.held.set(campaign.id, served);
      return;
    }
    this.byId.set(campaign.id, served);
    for (const placement of served.placements) {
      let lists = this.staging.get(placement);
      if (!lists) {
        lists = { all: new Map(), everyCountry: new Map(), byCountry: new Map() };
        this.staging.set(placement, lists);
      }
      for (const byDevice of listsFor(
        lists,
        served.countries,
        () => new Map<DeviceKey, ServedCampaign[]>(),
      )) {
        for (const key of deviceKeysOf(served.devices)) {
          const list = byDevice.get(key);
          if (list) list.push(served);
          else byDevice.set(key, [served]);
        }
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
    return new CampaignIndex(this.placements, this.byId, byPlacement, this.boundaries, this.held);
  }
}

/** Min-heap of boundaries by time: push and pop in O(log n). */
function pushBoundary(heap: Boundary[], boundary: Boundary): void {
  let i = heap.push(boundary) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as Boundary).at <= boundary.at) break;
    heap[i] = heap[parent] as Boundary;
    i = parent;
  }
  heap[i] = boundary;
}

function popBoundary(heap: Boundary[]): Boundary | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child =
      right < heap.length && (heap[right] as Boundary).at < (heap[left] as Boundary).at ? right : left;
    if ((heap[child] as Boundary).at >= last.at) break;
    heap[i] = heap[child] as Boundary;
    i = child;
  }
  heap[i] = last;
  return top;
}

/**
 * What can be served: enabled placements and running campaigns, bucketed by placement, country and
 * device so that a fetch touches only campaigns that match its targeting. Built whole at start
 * (see `ServingState`); after that a change to one campaign is applied in place with
 * {@link CampaignIndex.apply}, which lays out again only the priority groups that campaign is in.
 * Requests are served one at a time on one thread, so a fetch never sees a change half applied.
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

  private readonly admission: Admission;
  private readonly boundaries: Boundary[] = [];
  /** Placements with a drawn campaign whose chance is below 1, and how many such campaigns. */
  private readonly gradual = new Map<string, number>();
  /** How many drawn campaigns have frequency caps (D20): without any, fetch never asks a viewer's. */
  private frequencyCapped = 0;

  constructor(
    readonly placements: ReadonlySet<string>,
    private readonly byId: Map<number, ServedCampaign>,
    private readonly byPlacement: Map<string, PlacementLists>,
    boundaries: readonly Boundary[],
    /**
     * Running campaigns held by a daily cap, or by their pacing until its next step (D16): not
     * drawn by fetches, but their events are still tracked (a partner may display what it fetched
     * a moment before; past a cap, the store keeps it `past cap`).
     */
    private readonly held = new Map<number, ServedCampaign>(),
  ) {
    this.admission = new Admission(placements);
    for (const boundary of boundaries) pushBoundary(this.boundaries, boundary);
    for (const served of byId.values()) this.countGradual(served, 1);
  }

  private countGradual(served: ServedCampaign, change: 1 | -1): void {
    if (served.frequencyCaps !== null) this.frequencyCapped += change;
    if (served.chance >= 1) return;
    for (const placement of served.placements) {
      const count = (this.gradual.get(placement) ?? 0) + change;
      if (count > 0) this.gradual.set(placement, count);
      else this.gradual.delete(placement);
    }
  }

  /** Whether a drawn campaign has frequency caps, so that a fetch with `viewer` must look them up. */
  get hasFrequencyCaps(): boolean {
    return this.frequencyCapped > 0;
  }

  /** How many campaigns are indexed. */
  get size(): number {
    return this.byId.size;
  }

  /**
   * The earliest instant at which an indexed or held campaign starts, ends or comes out of a
   * daily cap's hold: {@link dueCampaigns} names them from then on.
   */
  get nextBoundaryAt(): number {
    return this.boundaries[0]?.at ?? Infinity;
  }

  /**
   * The ids of the campaigns whose boundary has come by `now` (each once), taken off the list; the
   * caller applies each one's current state again. Some may have changed since: applying the
   * current state is right either way.
   */
  dueCampaigns(now: number): number[] {
    const due = new Set<number>();
    while (this.nextBoundaryAt <= now) due.add((popBoundary(this.boundaries) as Boundary).id);
    return [...due];
  }

  /**
   * Applies the current state of one campaign in place (`campaign` undefined: it no longer exists):
   * takes out what was indexed for `id`, then adds the campaign back if it is served at `now`.
   * Only the priority groups it was or is in are laid out again; the result answers every fetch
   * exactly as a full build from the same campaigns would.
   */
  apply(id: number, campaign: Campaign | undefined, now: number, pace: Pace = UNPACED): void {
    const old = this.byId.get(id);
    if (old) {
      this.byId.delete(id);
      this.countGradual(old, -1);
      this.eachList(old, (groups) => removeFromGroups(groups, old));
    }
    this.held.delete(id);
    if (!campaign) return;
    const added: Boundary[] = [];
    const served = this.admission.admit(campaign, now, added, pace);
    for (const boundary of added) pushBoundary(this.boundaries, boundary);
    if (!served) return;
    if (!Admission.drawn(campaign, now, pace)) {
      this.held.set(id, served);
      return;
    }
    this.byId.set(id, served);
    this.countGradual(served, 1);
    this.eachList(served, (groups) => addToGroups(groups, served, byId));
  }

  /** Calls `change` with each priority-group list `served` is (or belongs) in. */
  private eachList(served: ServedCampaign, change: (groups: PriorityGroup<ServedCampaign>[]) => void): void {
    const keys = deviceKeysOf(served.devices);
    for (const placement of served.placements) {
      let lists = this.byPlacement.get(placement);
      if (!lists) {
        lists = { all: emptyLists(), everyCountry: emptyLists(), byCountry: new Map() };
        this.byPlacement.set(placement, lists);
      }
      for (const byDevice of listsFor(lists, served.countries, emptyLists)) {
        for (const key of keys) change(byDevice[key]);
      }
    }
  }

  hasPlacement(id: string): boolean {
    return this.placements.has(id);
  }

  /** A running, in-flight campaign by id (a daily cap or its pacing may be holding it back), or undefined. */
  campaign(id: number, now = Date.now()): ServedCampaign | undefined {
    // Not its schedule: an event for what was fetched just before its hours ended still counts.
    const campaign = this.byId.get(id) ?? this.held.get(id);
    return campaign && isInFlight(campaign, now) ? campaign : undefined;
  }

  /**
   * The campaigns a fetch returns, in delivery order (D3, D4), leaving out what the partner has
   * `blocked` (categories, advertisers) and the campaigns whose frequency caps the viewer has
   * `reached` (D20). The placement must be known.
   */
  select(
    query: FetchQuery,
    now = Date.now(),
    blocked: PartnerBlocks = NO_BLOCKS,
    random: Random = Math.random,
    reached: ReadonlySet<number> = NOTHING,
  ): ServedCampaign[] {
    const sources = this.sources(query);
    if (sources.length === 0) return [];
    // A placement with a campaign its pace releases gradually draws that campaign's chance.
    const gradual = this.gradual.size > 0 && this.gradual.has(query.placement);
    const inFlight = eligibleAt(now, blocked, gradual ? random : null);
    const eligible =
      reached.size === 0 ? inFlight : (item: ServedCampaign) => !reached.has(item.id) && inFlight(item);
    // Without blocks, a group whose every campaign is in flight needs no per-item check.
    const groupEligible =
      !blocksAnything(blocked) && !gradual && reached.size === 0
        ? (group: PriorityGroup<ServedCampaign>) =>
            group.allInFlightFrom <= now && now < group.allInFlightUntil
        : () => false;
    return drawOrdered(sources, query.limit, eligible, random, groupEligible);
  }

  /**
   * A campaign's chance in a fetch like `query` (D4): how many eligible campaigns come before it
   * (a higher priority), how many it is drawn against (its priority), its share of their weight
   * (the chance it is drawn first among them), and the share of `draws` fetches it is returned in.
   */
  chance(
    campaign: Pick<ServedCampaign, 'id' | 'priority' | 'weight'>,
    query: FetchQuery,
    now: number,
    blocked: PartnerBlocks = NO_BLOCKS,
    draws = 1000,
  ): { ahead: number; rivals: number; weightShare: number; inResponse: number } {
    const eligible = eligibleAt(now, blocked);
    let ahead = 0;
    let rivals = 0;
    let weight = campaign.weight;
    for (const groups of this.sources(query))
      for (const group of groups)
        for (const item of group.items) {
          if (item.id === campaign.id || !eligible(item)) continue;
          if (item.priority > campaign.priority) ahead++;
          else if (item.priority === campaign.priority) {
            rivals++;
            weight += item.weight;
          }
        }
    let inResponse = ahead >= query.limit ? 0 : ahead + rivals < query.limit ? 1 : Number.NaN;
    if (Number.isNaN(inResponse)) {
      let found = 0;
      for (let i = 0; i < draws; i++)
        if (this.select(query, now, blocked).some((item) => item.id === campaign.id)) found++;
      inResponse = found / draws;
    }
    return { ahead, rivals, weightShare: campaign.weight / weight, inResponse };
  }

  /** The lists a fetch draws from: disjoint, each sorted by priority. */
  private sources(query: Omit<FetchQuery, 'limit'>): PriorityGroup<ServedCampaign>[][] {
    const lists = this.byPlacement.get(query.placement);
    if (!lists) return [];
    const device: DeviceKey = query.device ?? 'any';
    if (query.location === undefined) return [lists.all[device]];
    const forCountry = lists.byCountry.get(query.location);
    return forCountry ? [lists.everyCountry[device], forCountry[device]] : [lists.everyCountry[device]];
  }
}

/**
 * In flight and in its scheduled hours at `now`, not `blocked` by the partner (its category, its
 * advertiser) and, with `random`, drawn its chance (a campaign drawn again in one fetch after
 * missing it gets another try: a slight lift for large groups only).
 */
function eligibleAt(
  now: number,
  blocked: PartnerBlocks,
  random: Random | null = null,
): (campaign: ServedCampaign) => boolean {
  const inFlight = !blocksAnything(blocked)
    ? (campaign: ServedCampaign) => isInFlight(campaign, now) && inHours(campaign, now)
    : (campaign: ServedCampaign) =>
        isInFlight(campaign, now) && inHours(campaign, now) && !isBlocked(campaign, blocked);
  return random === null
    ? inFlight
    : (campaign) => inFlight(campaign) && (campaign.chance >= 1 || random() < campaign.chance);
}
