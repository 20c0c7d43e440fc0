import type { AuditedChange } from '../domain/webhook-events.js';
import type { AdvertiserBudget } from '../domain/advertiser-budgets.js';
import type { Selectable } from 'kysely';
import type { Campaign, CampaignInput, CampaignStatus, Caps } from '../domain/campaigns.js';
import type { KeyPolicies } from '../domain/rate-limits.js';
import type { Pacing } from '../domain/pacing.js';
import type { FrequencyCap } from '../domain/frequency-caps.js';
import type { Schedule } from '../domain/schedules.js';
import type { PartnerBlocks } from '../domain/partner-blocks.js';
import type { Device } from '../domain/targeting.js';
import type { Verdict } from '../domain/verdicts.js';
import type { Account, Role } from '../domain/accounts.js';
import { priceOf, type AdvertiserPricing, type Price } from '../domain/prices.js';
import { micros, type Micros } from '../domain/money.js';
import type {
  AdminTokenTable,
  ApiKeyTable,
  CampaignTable,
  PartnerTable,
  SessionTable,
  UserLinkTable,
  UserTable,
} from './schema.js';

/** Row ⇄ domain mapping, kept apart from the queries so both engines share it. */

export interface Partner extends PartnerBlocks {
  id: number;
  name: string;
  blockedCategories: string[];
  blockedAdvertisers: number[];
  createdAt: number;
  updatedAt: number;
}

export type ApiKeyStatus = 'active' | 'suspended' | 'revoked';

export interface RateLimits {
  fetchRate: number | null;
  fetchBurst: number | null;
  eventsRate: number | null;
  eventsBurst: number | null;
}

export interface ApiKeyRecord {
  id: number;
  partnerId: number;
  label: string | null;
  displayPrefix: string;
  status: ApiKeyStatus;
  createdAt: number;
  revokedAt: number | null;
  expiresAt: number | null;
  suspendedReason: string | null;
  suspendedAt: number | null;
  rateLimits: RateLimits;
  lastUsedAt: number | null;
  /** Requests refused because this key came from a browser: it has leaked into client code. */
  browserRequests: number;
  lastBrowserRequestAt: number | null;
}

/** A campaign row's caps. */
export function capsOf(
  row: Pick<
    Selectable<CampaignTable>,
    'cap_impressions_total' | 'cap_clicks_total' | 'cap_impressions_daily' | 'cap_clicks_daily'
  >,
): Caps {
  return {
    impressionsTotal: row.cap_impressions_total,
    clicksTotal: row.cap_clicks_total,
    impressionsDaily: row.cap_impressions_daily,
    clicksDaily: row.cap_clicks_daily,
  };
}

export function toCampaign(row: Selectable<CampaignTable>, placements: string[]): Campaign {
  return {
    id: row.id,
    advertiserId: row.advertiser_id,
    title: row.title,
    description: row.description,
    category: row.category,
    destinationUrl: row.destination_url,
    status: row.status as CampaignStatus,
    priority: row.priority,
    weight: row.weight,
    placements,
    countries: JSON.parse(row.countries) as string[],
    devices: JSON.parse(row.devices) as Device[],
    startAt: row.start_at,
    endAt: row.end_at,
    timeZone: row.time_zone,
    caps: capsOf(row),
    pacing: row.pacing as Pacing,
    frequencyCaps: JSON.parse(row.frequency_caps) as FrequencyCap[],
    schedule: row.schedule === null ? null : (JSON.parse(row.schedule) as Schedule),
    price: priceOf(row.price_model, row.price_micros),
    budget: {
      totalMicros: row.budget_total_micros === null ? null : micros(row.budget_total_micros),
      dailyMicros: row.budget_daily_micros === null ? null : micros(row.budget_daily_micros),
    },
    cappedUntil: row.capped_until,
    budgetHeldUntil: row.budget_held_until,
    rejectionReason: row.rejection_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Columns for the fields of a campaign input that are present. */
export function campaignColumns(input: Partial<CampaignInput>) {
  const columns: Partial<Omit<Selectable<CampaignTable>, 'id'>> = {};
  if (input.title !== undefined) columns.title = input.title;
  if (input.description !== undefined) columns.description = input.description;
  if (input.category !== undefined) columns.category = input.category;
  if (input.destinationUrl !== undefined) columns.destination_url = input.destinationUrl;
  if (input.status !== undefined) columns.status = input.status;
  if (input.priority !== undefined) columns.priority = input.priority;
  if (input.weight !== undefined) columns.weight = input.weight;
  if (input.countries !== undefined) columns.countries = JSON.stringify(input.countries);
  if (input.devices !== undefined) columns.devices = JSON.stringify(input.devices);
  if (input.startAt !== undefined) columns.start_at = input.startAt;
  if (input.endAt !== undefined) columns.end_at = input.endAt;
  if (input.timeZone !== undefined) columns.time_zone = input.timeZone;
  if (input.caps !== undefined) {
    columns.cap_impressions_total = input.caps.impressionsTotal;
    columns.cap_clicks_total = input.caps.clicksTotal;
    columns.cap_impressions_daily = input.caps.impressionsDaily;
    columns.cap_clicks_daily = input.caps.clicksDaily;
  }
  if (input.pacing !== undefined) columns.pacing = input.pacing;
  if (input.frequencyCaps !== undefined) columns.frequency_caps = JSON.stringify(input.frequencyCaps);
  if (input.schedule !== undefined)
    columns.schedule = input.schedule === null ? null : JSON.stringify(input.schedule);
  if (input.price !== undefined) {
    columns.price_model = input.price?.model ?? null;
    columns.price_micros = input.price?.amountMicros ?? null;
  }
  if (input.budget !== undefined) {
    columns.budget_total_micros = input.budget.totalMicros;
    columns.budget_daily_micros = input.budget.dailyMicros;
  }
  return columns;
}

export function toPartner(row: Selectable<PartnerTable>): Partner {
  return {
    id: row.id,
    name: row.name,
    blockedCategories: JSON.parse(row.blocked_categories) as string[],
    blockedAdvertisers: JSON.parse(row.blocked_advertisers) as number[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toApiKey(
  row: Selectable<ApiKeyTable> & {
    last_used_at?: number | null;
    browser_requests?: number | string | null;
    last_browser_request_at?: number | null;
  },
): ApiKeyRecord {
  return {
    id: row.id,
    partnerId: row.partner_id,
    label: row.label,
    displayPrefix: row.display_prefix,
    status: row.status as ApiKeyStatus,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    suspendedReason: row.suspended_reason,
    suspendedAt: row.suspended_at,
    rateLimits: {
      fetchRate: row.fetch_rate,
      fetchBurst: row.fetch_burst,
      eventsRate: row.events_rate,
      eventsBurst: row.events_burst,
    },
    lastUsedAt: row.last_used_at ?? null,
    browserRequests: Number(row.browser_requests ?? 0),
    lastBrowserRequestAt: row.last_browser_request_at ?? null,
  };
}

/** An admin token as stored: never its plaintext, and its digest stays in the store. */
export interface AdminTokenRecord {
  id: number;
  label: string;
  displayPrefix: string;
  scope: string;
  role: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export function toAdminToken(row: Omit<Selectable<AdminTokenTable>, 'digest'>): AdminTokenRecord {
  return {
    id: row.id,
    label: row.label,
    displayPrefix: row.display_prefix,
    scope: row.scope,
    role: row.role,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

/** One tracked impression or click, as the event ledger stores it. */
export type EventKind = 'impression' | 'click';

export interface TrackedEvent {
  kind: EventKind;
  campaignId: number;
  placement: string;
  country: string | null;
  device: Device | null;
  partnerId: number;
  apiKeyId: number;
  occurredAt: number;
  verdict: Verdict;
  reason: string | null;
  /** The request's `Idempotency-Key` header (D9), if it had one. */
  idempotencyKey: string | null;
  /** The end user's address, already truncated to its /24 or /48 (D15), if the partner sent it. */
  userAddress: string | null;
  /** The partner's `occurredAt` (D15), as judged; `occurredAt` above is the receipt time. */
  eventAt?: number | null;
  /**
   * The campaign had a cap when the event was validated (from the serving index), so storing the
   * event must update its cap counters. Events of uncapped campaigns skip that query.
   */
  mayHitCap: boolean;
  /**
   * The campaign charged per event of this kind when the event was validated (a `cpm` price for an
   * impression, `cpc` for a click; from the serving index), so storing it must settle its cost
   * (D18). Where batches commit in a transaction anyway (SQLite) the commit checks every counted
   * event's campaign, so a price the index has not learnt yet is charged too.
   */
  priced: boolean;
  /** The partner named the viewer (D20): counted in the rollups' `with_viewer`; the viewer is not kept. */
  viewer?: boolean;
  /** What the event cost in micros: set by its batch's commit (store/charges.ts), else 0. */
  costMicros?: number;
  /** What the event earned its partner in micros, set with its cost (store/charges.ts), else 0. */
  earningsMicros?: number;
  /** The `campaign_prices` row the event was charged at, set with its cost; null if not charged. */
  priceId?: number | null;
  /** The partner's revenue share it earned under, set with its earnings; null without one. */
  shareId?: number | null;
}

/**
 * A copy of `event` as its batch settled it: its verdict, reason, cost and earnings, and the price
 * and revenue share they come from (null where it was not charged). Every field is
 * written out, in one order, rather than spread: a batch copies dozens of events, and spreading
 * objects of several shapes sent V8 to its slow path for each copy (about a tenth of a tracking
 * request's CPU with money on, `npm run bench:profile -- events`).
 */
export function settledAs(
  event: TrackedEvent,
  verdict: Verdict,
  reason: string | null,
  costMicros: number,
  earningsMicros: number,
  priceId: number | null = null,
  shareId: number | null = null,
): TrackedEvent {
  // Required: a field added to TrackedEvent and not copied here fails to compile.
  const copy: Required<TrackedEvent> = {
    kind: event.kind,
    campaignId: event.campaignId,
    placement: event.placement,
    country: event.country,
    device: event.device,
    partnerId: event.partnerId,
    apiKeyId: event.apiKeyId,
    occurredAt: event.occurredAt,
    verdict,
    reason,
    idempotencyKey: event.idempotencyKey,
    userAddress: event.userAddress,
    eventAt: event.eventAt ?? null,
    mayHitCap: event.mayHitCap,
    priced: event.priced,
    viewer: event.viewer === true,
    costMicros,
    earningsMicros,
    priceId,
    shareId,
  };
  return copy;
}

// ---- records the store's modules take and give --------------------------------------------

export interface Placement {
  id: string;
  description: string;
  enabled: boolean;
}

export interface Advertiser {
  id: number;
  name: string;
  /** What all its campaigns may spend together (D18). */
  budget: AdvertiserBudget;
  /** Who sets its campaigns' prices (D18): the operator alone, or its own people too. */
  pricing: AdvertiserPricing;
  createdAt: number;
  updatedAt: number;
}

/** What the auth layer needs to know about a key, indexed by digest, with its partner's blocks. */
export interface LiveKey extends PartnerBlocks {
  id: number;
  partnerId: number;
  digest: string;
  status: Exclude<ApiKeyStatus, 'revoked'>;
  /** A rotated key stops working at this instant. */
  expiresAt: number | null;
  /** The key's rate limits (D7), its own or the defaults. */
  policies: KeyPolicies;
}

export interface AdvertiserImport {
  name: string;
  campaigns: CampaignInput[];
}

export interface ImportSummary {
  advertisersCreated: number;
  advertisersExisting: number;
  campaignsCreated: number;
  campaignIds: number[];
}

export interface CampaignFilter {
  status?: CampaignStatus;
  advertiserId?: number;
  placement?: string;
  /** Words in the title, any case; digits alone also find the campaign with that id. */
  search?: string;
}

/** The orders the campaigns list sorts by (delivery: counted, up to the last summed quarter hour). */
export const CAMPAIGN_SORTS = ['newest', 'name', 'impressions', 'clicks'] as const;
export type CampaignSortKey = (typeof CAMPAIGN_SORTS)[number];

export interface CampaignSort {
  by: CampaignSortKey;
  descending: boolean;
}

/**
 * A page request: at most `limit` items after the one with id `after`, in id order (the order
 * items were created), or newest first with `newestFirst`, where "after" means older.
 */
export interface PageRequest {
  after?: number;
  limit?: number;
  newestFirst?: boolean;
}

/** A numbered page of a list, for people: `size` rows from the `offset`-th, newest first. */
export interface NumberedPageRequest {
  offset: number;
  size: number;
}

/** The rows of one numbered page and how many rows the whole list has. */
export interface NumberedPage<T> {
  rows: T[];
  total: number;
}

/** An audit entry: a change (what the webhooks it causes are made from) with when and who. */
export interface AuditEntry extends AuditedChange {
  at: number;
  actor: string;
}

export interface AuditRecord extends AuditEntry {
  id: number;
}

/** What storing a batch did beyond storing it. */
export interface BatchOutcome {
  /**
   * Positions in the batch of events refused and not stored: their Idempotency-Key was already
   * used, within 24 hours, for a different request (D9).
   */
  refused: number[];
  /** Positions in the batch of events stored as idempotent replays (`duplicate`, D9). */
  replayed: number[];
  /** Positions in the batch of events stored as `invalid`, `past cap`: their campaign had reached it (D16). */
  pastCap: number[];
  /**
   * Positions in the batch of events stored as `invalid`, `past budget` or `past advertiser budget`:
   * charging them would pass a budget of their campaign or advertiser (D18).
   */
  pastBudget: number[];
  /** Campaigns completed by reaching a total cap or total budget. */
  completed: number[];
  /** Campaigns held for the rest of their day by a daily cap or daily budget. */
  cappedForTheDay: number[];
  /** Advertisers whose budget the batch spent: their campaigns are held (D18). */
  advertisersHeld: number[];
  /** Events stored, by `kind:verdict` (for metrics). */
  stored: Map<string, number>;
}

/** The outcome of a batch before anything in it is counted: nothing refused, replayed or capped. */
export function emptyBatchOutcome(): BatchOutcome {
  return {
    refused: [],
    replayed: [],
    pastCap: [],
    pastBudget: [],
    completed: [],
    cappedForTheDay: [],
    advertisersHeld: [],
    stored: new Map(),
  };
}

export type CampaignPatch = Partial<CampaignInput> & {
  rejectionReason?: string | null;
  cappedUntil?: number | null;
};

/** One price a campaign has had (D18): from when, set by whom, and what was billed at it. */
export interface CampaignPriceRecord {
  /** Epoch milliseconds from which it was in force. */
  since: number;
  /** Null: the campaign had no price from then on. */
  price: Price | null;
  /** Who set it, as the audit log names actors (`admin:<token id>`, `user:<id>`, `cli`, `system`). */
  setBy: string;
  /** Billable units (impressions for a CPM, clicks for a CPC) charged at it. */
  billedUnits: number;
  spendMicros: Micros;
}

/** A person (D13): never the password hash, which stays in the store but for sign-in. */
export interface UserRecord {
  id: number;
  email: string;
  account: Account;
  role: Role;
  hasPassword: boolean;
  createdAt: number;
  passwordChangedAt: number | null;
  disabledAt: number | null;
}

export function toUser(row: Selectable<UserTable>): UserRecord {
  const account: Account =
    row.account_kind === 'operator'
      ? { kind: 'operator' }
      : { kind: row.account_kind as 'advertiser' | 'partner', id: Number(row.account_id) };
  return {
    id: row.id,
    email: row.email,
    account,
    role: row.role as Role,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
    passwordChangedAt: row.password_changed_at,
    disabledAt: row.disabled_at,
  };
}

export type LinkPurpose = 'invitation' | 'reset';

export interface UserLinkRecord {
  id: number;
  userId: number;
  purpose: LinkPurpose;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export function toUserLink(row: Omit<Selectable<UserLinkTable>, 'digest'>): UserLinkRecord {
  return {
    id: row.id,
    userId: Number(row.user_id),
    purpose: row.purpose as LinkPurpose,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}

export interface SessionRecord {
  id: number;
  userId: number;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  endedAt: number | null;
  userAgent: string | null;
}

export function toSession(row: Omit<Selectable<SessionTable>, 'digest'>): SessionRecord {
  return {
    id: row.id,
    userId: Number(row.user_id),
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
    userAgent: row.user_agent,
  };
}
