import {
  DEFAULT_PRIORITY,
  DEFAULT_WEIGHT,
  OPERATOR_FIELDS,
  REACHED,
  unknownFieldProblems,
  validateCampaignInput,
  type Campaign,
  type CampaignInput,
  type FieldProblem,
} from '../domain/campaigns.js';
import { invalid, invalidField, notFound, unprocessable } from '../domain/errors.js';
import type { Micros } from '../domain/money.js';
import { FORECAST_WINDOW_MS, forecastBudget, type BudgetForecast } from '../domain/budget-forecast.js';
import { localDate, startOfNextLocalDay } from '../domain/time-zones.js';
import type { Price } from '../domain/prices.js';
import { NUL_PROBLEM, nulFields } from '../domain/nul-characters.js';
import {
  APPROVED_STATUSES,
  CAMPAIGN_ACTIONS,
  statusAfterAction,
  statusAfterCapChange,
  statusAfterEdit,
  statusOnImport,
  type CampaignAction,
} from '../domain/lifecycle.js';
import type {
  Advertiser,
  AdvertiserImport,
  CampaignFilter,
  CampaignPriceRecord,
  CampaignSort,
  ImportSummary,
  NumberedPage,
  NumberedPageRequest,
  PageRequest,
  Store,
} from '../store/store.js';
import { requireChange, requireOperator, requireOperatorAccount, sees } from './scope.js';
import { audit, type Actor } from './audit.js';
import { commitServed } from '../serving/serving-changes.js';
import { ServedService, type AuditedObject } from './served-service.js';

/** What a campaign spent against its budgets, and when each runs out at the current pace (D18). */
export interface CampaignBudgetSpend {
  /** The campaign's local day, `YYYY-MM-DD`. */
  day: string;
  totalMicros: Micros;
  dayMicros: Micros;
  forecast: { total: BudgetForecast; daily: BudgetForecast };
}

/** A price as an import file, an update and the audit log carry it: `{ model, amountMicros }` or null. */
export const priceToJson = (price: Price | null): Record<string, unknown> | null =>
  price === null ? null : { model: price.model, amountMicros: price.amountMicros };

/**
 * The JSON form of a campaign in an import file or an update (times as ISO 8601 strings); the
 * management API's adds the currency to its price (`campaignRecord`).
 */
export function campaignToJson(campaign: Campaign): Record<string, unknown> {
  return {
    id: campaign.id,
    advertiserId: campaign.advertiserId,
    title: campaign.title,
    description: campaign.description,
    category: campaign.category,
    destinationUrl: campaign.destinationUrl,
    status: campaign.status,
    priority: campaign.priority,
    weight: campaign.weight,
    placements: campaign.placements,
    countries: campaign.countries,
    devices: campaign.devices,
    startAt: campaign.startAt === null ? null : new Date(campaign.startAt).toISOString(),
    endAt: campaign.endAt === null ? null : new Date(campaign.endAt).toISOString(),
    timeZone: campaign.timeZone,
    caps: campaign.caps,
    pacing: campaign.pacing,
    frequencyCaps: campaign.frequencyCaps,
    schedule: campaign.schedule,
    price: priceToJson(campaign.price),
    budget: campaign.budget,
    cappedUntil: campaign.cappedUntil === null ? null : new Date(campaign.cappedUntil).toISOString(),
    rejectionReason: campaign.rejectionReason,
    createdAt: new Date(campaign.createdAt).toISOString(),
    updatedAt: new Date(campaign.updatedAt).toISOString(),
  };
}

/** A price as the management API answers it: with the deployment's currency, which it is in. */
export const priceRecord = (price: Price | null, currency: string): Record<string, unknown> | null =>
  price === null ? null : { ...priceToJson(price), currency };

/** A campaign as the management API answers it: its JSON form, its price naming the currency. */
export function campaignRecord(campaign: Campaign, currency: string): Record<string, unknown> {
  return {
    ...campaignToJson(campaign),
    price: priceRecord(campaign.price, currency),
    budget: { ...campaign.budget, currency },
  };
}

export interface ImportOptions {
  /** The operator approves every campaign of the file, so it may skip review (audited). */
  approve?: boolean;
}

/** The audit reason of a campaign that skipped review because its import was approved. */
export const APPROVED_ON_IMPORT = 'approved on import';

const unapprovedStatus = (status: string): string =>
  `"${status}" skips review: approve the import (placard campaigns import --approve) ` +
  'or leave status out so the campaign goes through review';

/**
 * Fields an edit may change (PATCH /campaigns/:id, the dashboard's edit form); status moves only
 * through actions (D11).
 */
export const EDITABLE = [
  'title',
  'description',
  'category',
  'destinationUrl',
  'priority',
  'weight',
  'placements',
  'countries',
  'devices',
  'startAt',
  'endAt',
  'timeZone',
  'caps',
  'pacing',
  'frequencyCaps',
  'schedule',
  'price',
  'budget',
] as const;

/** Whether a price as sent (null, or an object with `model` and `amountMicros`) differs from `current`. */
function priceDiffers(sent: unknown, current: Price | null): boolean {
  if (sent === null || current === null) return sent !== current;
  const { model, amountMicros } = (typeof sent === 'object' ? sent : {}) as Record<string, unknown>;
  return model !== current.model || amountMicros !== current.amountMicros;
}

/** Whether a total budget changed from `before` to `after` lets more be spent: raised or removed. */
const totalBudgetRaised = (before: Micros | null, after: Micros | null): boolean =>
  before !== null && (after === null || after > before);

/**
 * Whether the campaign is completed by its total budget (D18) while its flight is not over: the
 * batch that spent it completed it with the audit reason 'total budget reached', its latest change.
 */
async function completedByTotalBudget(tx: Store, campaign: Campaign, now: number): Promise<boolean> {
  if (campaign.status !== 'completed' || (campaign.endAt !== null && campaign.endAt <= now)) return false;
  const latest = await tx.auditPage(
    { objectType: 'campaign', objectId: String(campaign.id) },
    { offset: 0, size: 1 },
  );
  const entry = latest.rows[0];
  return entry?.action === 'complete' && entry.reason === REACHED.totalBudget;
}

/** `a`, `a and b`, `a, b and c`. */
const spokenList = (items: readonly string[]): string =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * Refuses a priority, weight or price someone outside the operator's account would change:
 * `current` is the campaign's (a new one's are the defaults, and no price). The value it already
 * has is no change, so a client that sends back the campaign it read is not refused for it. The
 * price is also the advertiser's own people's to set where the operator allows it (its `pricing`,
 * D18); the refusal then says why.
 */
function requireOperatorFields(
  actor: Actor,
  changes: Record<string, unknown>,
  current: { priority: number; weight: number; price: Price | null },
  advertiser: Pick<Advertiser, 'name' | 'pricing'>,
): void {
  const changed = OPERATOR_FIELDS.filter((field) => {
    if (changes[field] === undefined) return false;
    if (field === 'price' && advertiser.pricing === 'advertiser') return false;
    return field === 'price'
      ? priceDiffers(changes[field], current.price)
      : changes[field] !== current[field];
  });
  if (changed.length === 0) return;
  const why = changed.includes('price')
    ? `: the operator has not allowed advertiser "${advertiser.name}" to set its campaigns' prices`
    : '';
  requireOperatorAccount(actor, `set a campaign's ${spokenList(changed)}${why}`);
}

/** The fields of a campaign in an import file: the editable ones and the status it starts in. */
const IMPORTED = [...EDITABLE, 'status'];

/** Advertisers' campaigns: bulk import, creation, editing under review rules, lifecycle actions. */
export class CampaignService extends ServedService {
  /** A campaign as its lifecycle actions are audited. */
  private readonly audited: AuditedObject<Campaign> = {
    type: 'campaign',
    find: (store, id) => this.visibleCampaign(store, id),
    view: campaignToJson,
  };

  private async knownPlacements(store: Store = this.store): Promise<Set<string>> {
    return new Set((await store.listPlacements()).map((p) => p.id));
  }

  /**
   * Validates a whole import document (`{"advertisers":[{"name":…,"campaigns":[…]}]}`) and stores it
   * all-or-nothing. Every problem is reported at once, with its path in the document. Imported
   * campaigns go through review like any other (draft, or pending_review when the file says so),
   * unless the operator approves the import: only then may a campaign be scheduled, running, paused
   * or completed, its audit entry says it was approved on import, and a scheduled or running one
   * lands where the clock puts it, as an approval would.
   */
  async import(document: unknown, options: ImportOptions = {}): Promise<ImportSummary> {
    requireOperator(this.actor, 'import advertisers and campaigns');
    const problems: FieldProblem[] = [];
    const advertisers: AdvertiserImport[] = [];
    const list = (document as { advertisers?: unknown } | null)?.advertisers;
    if (!Array.isArray(list) || list.length === 0) {
      throw unprocessable('invalid import file', [
        { field: 'advertisers', message: 'must be a non-empty array' },
      ]);
    }
    problems.push(...unknownFieldProblems(document as object, ['advertisers'], ''));
    for (const field of nulFields(document)) problems.push({ field, message: NUL_PROBLEM });
    const known = await this.knownPlacements();
    const now = this.clock();
    list.forEach((raw: unknown, i) => {
      const path = `advertisers[${i}]`;
      const entry = raw as { name?: unknown; campaigns?: unknown } | null;
      if (entry !== null && typeof entry === 'object')
        problems.push(...unknownFieldProblems(entry, ['name', 'campaigns'], path));
      const name = entry?.name;
      if (typeof name !== 'string' || name.trim() === '' || name.length > 100) {
        problems.push({ field: `${path}.name`, message: 'is required: a string of 1 to 100 characters' });
      }
      if (!Array.isArray(entry?.campaigns)) {
        problems.push({ field: `${path}.campaigns`, message: 'must be an array' });
        return;
      }
      const campaigns: CampaignInput[] = [];
      entry.campaigns.forEach((rawCampaign: unknown, j) => {
        const at = `${path}.campaigns[${j}]`;
        const result = validateCampaignInput(rawCampaign, at, known);
        problems.push(...result.problems);
        if (rawCampaign !== null && typeof rawCampaign === 'object' && !Array.isArray(rawCampaign))
          problems.push(...unknownFieldProblems(rawCampaign, IMPORTED, at));
        if (!result.value) return;
        if (!APPROVED_STATUSES.includes(result.value.status)) campaigns.push(result.value);
        else if (options.approve)
          campaigns.push({ ...result.value, status: statusOnImport(result.value, now) });
        else problems.push({ field: `${at}.status`, message: unapprovedStatus(result.value.status) });
      });
      if (typeof name === 'string') advertisers.push({ name: name.trim(), campaigns });
    });
    if (problems.length > 0) throw unprocessable('invalid import file', problems);
    return commitServed(this.store, this.serving, async (tx) => {
      const summary = await tx.importCampaigns(advertisers, now, this.actor.id);
      const created = await tx.getCampaigns(summary.campaignIds);
      await tx.appendAudit(
        created.map((campaign) => ({
          at: now,
          actor: this.actor.id,
          objectType: 'campaign',
          objectId: String(campaign.id),
          action: 'import',
          reason: APPROVED_STATUSES.includes(campaign.status) ? APPROVED_ON_IMPORT : null,
          before: null,
          after: campaignToJson(campaign),
        })),
      );
      return summary;
    });
  }

  /** Creates a campaign for an advertiser; it starts as a draft whatever the input says. */
  async create(advertiserId: number, input: Record<string, unknown>): Promise<Campaign> {
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const advertiser = await tx.findAdvertiser(advertiserId);
      if (!advertiser || !sees(this.actor, { kind: 'advertiser', id: advertiserId }))
        throw notFound(`advertiser ${advertiserId} not found`);
      requireChange(this.actor);
      requireOperatorFields(
        this.actor,
        input,
        { priority: DEFAULT_PRIORITY, weight: DEFAULT_WEIGHT, price: null },
        advertiser,
      );
      const result = validateCampaignInput({ ...input, status: 'draft' }, '', await this.knownPlacements(tx));
      if (!result.value) throw unprocessable('invalid campaign', result.problems);
      const id = await tx.createCampaign(advertiserId, result.value, now, this.actor.id);
      const campaign = (await tx.getCampaign(id))!;
      await audit(
        tx,
        this.actor,
        {
          objectType: 'campaign',
          objectId: id,
          action: 'create',
          before: null,
          after: campaignToJson(campaign),
        },
        now,
      );
      return campaign;
    });
  }

  /** Campaigns the actor may see: an advertiser's people see their own only; partners' none. */
  async list(filter: CampaignFilter = {}, request?: PageRequest): Promise<Campaign[]> {
    const scoped = this.scoped(filter);
    return scoped ? this.store.listCampaigns(scoped, request) : [];
  }

  /**
   * One numbered page of the campaigns this actor may see, newest first unless `sort` says
   * otherwise, with how many there are.
   */
  async page(
    filter: CampaignFilter,
    request: NumberedPageRequest,
    sort?: CampaignSort,
  ): Promise<NumberedPage<Campaign>> {
    const scoped = this.scoped(filter);
    return scoped ? this.store.campaignPage(scoped, request, sort) : { rows: [], total: 0 };
  }

  /** `page`, newest first, each campaign with its advertiser's name (one query for the page). */
  async pageWithAdvertisers(
    filter: CampaignFilter,
    request: NumberedPageRequest,
  ): Promise<NumberedPage<Campaign & { advertiserName: string }>> {
    const found = await this.page(filter, request);
    const names = await this.store.advertiserNames(found.rows.map((campaign) => campaign.advertiserId));
    const named = (campaign: Campaign) => names.get(campaign.advertiserId) ?? String(campaign.advertiserId);
    return {
      ...found,
      rows: found.rows.map((campaign) => ({ ...campaign, advertiserName: named(campaign) })),
    };
  }

  /** `filter` narrowed to the campaigns this actor may see; undefined when it may see none. */
  private scoped(filter: CampaignFilter): CampaignFilter | undefined {
    const account = this.actor.account;
    if (account.kind === 'partner') return undefined;
    if (account.kind === 'advertiser') {
      if (filter.advertiserId !== undefined && filter.advertiserId !== account.id) return undefined;
      return { ...filter, advertiserId: account.id };
    }
    return filter;
  }

  get(id: number): Promise<Campaign> {
    return this.visibleCampaign(this.store, id);
  }

  /** Every price the campaign has had, newest first, for whoever may see the campaign. */
  async prices(id: number): Promise<CampaignPriceRecord[]> {
    await this.visibleCampaign(this.store, id);
    return this.store.campaignPrices(id);
  }

  /**
   * What the campaign spent against its budgets (D18), as they count it: in total and on its local
   * day (`day`), with when each budget runs out at the pace of the last hour's spend (`forecast`).
   */
  async budgetSpend(id: number): Promise<CampaignBudgetSpend> {
    const campaign = await this.visibleCampaign(this.store, id);
    const now = this.clock();
    const day = localDate(now, campaign.timeZone);
    const [counters, recent] = await Promise.all([
      this.store.capCounters([
        { campaignId: id, day: 'total' },
        { campaignId: id, day },
      ]),
      this.store.campaignSpendBetween([id], now - FORECAST_WINDOW_MS, now),
    ]);
    const totalMicros = counters.get(`${id}:total`)?.spendMicros ?? (0 as Micros);
    const dayMicros = counters.get(`${id}:${day}`)?.spendMicros ?? (0 as Micros);
    const forecast = (budget: Micros | null, spent: Micros, periodEnd: number | null) =>
      forecastBudget({ budget, spent, recent: recent.get(id) ?? (0 as Micros), now, periodEnd });
    return {
      day,
      totalMicros,
      dayMicros,
      forecast: {
        total: forecast(campaign.budget.totalMicros, totalMicros, campaign.endAt),
        daily: forecast(campaign.budget.dailyMicros, dayMicros, startOfNextLocalDay(now, campaign.timeZone)),
      },
    };
  }

  /** The campaign, or not found when it does not exist or is another advertiser's (D13). */
  private async visibleCampaign(store: Store, id: number): Promise<Campaign> {
    const campaign = await store.getCampaign(id);
    if (!campaign || !sees(this.actor, { kind: 'advertiser', id: campaign.advertiserId }))
      throw notFound(`campaign ${id} not found`);
    return campaign;
  }

  /**
   * Applies changed fields (in the import format) after validating the campaign as a whole. The
   * status follows D11: a rejected campaign returns to draft, an approved one whose creative
   * changed returns to review.
   */
  async update(id: number, changes: Record<string, unknown>): Promise<Campaign> {
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) {
      throw invalid('the change must be a JSON object of campaign fields');
    }
    const unknownFields = Object.keys(changes).filter(
      (field) => !(EDITABLE as readonly string[]).includes(field),
    );
    if (unknownFields.includes('status')) {
      throw invalidField(
        'status',
        'changes through actions: submit, approve, reject, pause, resume, archive',
      );
    }
    if (unknownFields.length > 0)
      throw unprocessable(`invalid change to campaign ${id}`, unknownFieldProblems(changes, EDITABLE, ''));
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const current = await this.visibleCampaign(tx, id);
      requireChange(this.actor);
      requireOperatorFields(this.actor, changes, current, (await tx.findAdvertiser(current.advertiserId))!);
      const before = campaignToJson(current);
      const result = validateCampaignInput({ ...before, ...changes }, '', await this.knownPlacements(tx));
      if (!result.value) throw unprocessable(`invalid change to campaign ${id}`, result.problems);
      const candidate = campaignToJson({ ...current, ...result.value });
      const changed = EDITABLE.filter(
        (field) => JSON.stringify(candidate[field]) !== JSON.stringify(before[field]),
      );
      let status = statusAfterEdit(current.status, changed);
      const reopened =
        changed.includes('caps') &&
        statusAfterCapChange(current, result.value.caps, await tx.campaignTotals(id), now) === 'paused';
      const budgetReopened =
        !reopened &&
        changed.includes('budget') &&
        (await completedByTotalBudget(tx, current, now)) &&
        totalBudgetRaised(current.budget.totalMicros, result.value.budget?.totalMicros ?? null);
      if (reopened || budgetReopened) status = 'paused';
      const updated = (await tx.updateCampaign(id, { ...result.value, status }, now, this.actor.id))!;
      await audit(
        tx,
        this.actor,
        {
          objectType: 'campaign',
          objectId: id,
          action: 'update',
          reason: reopened
            ? 'total cap no longer reached: paused, to resume'
            : budgetReopened
              ? 'total budget raised: paused, to resume'
              : null,
          before,
          after: campaignToJson(updated),
        },
        now,
      );
      return updated;
    });
  }

  /** Runs a lifecycle action (D11); 409 naming the current state when it is not allowed. */
  async act(id: number, action: string, reason?: unknown): Promise<Campaign> {
    if (!(CAMPAIGN_ACTIONS as readonly string[]).includes(action)) {
      throw invalid(`unknown action "${action}"; actions: ${CAMPAIGN_ACTIONS.join(', ')}`);
    }
    if (reason !== undefined && reason !== null && typeof reason !== 'string')
      throw invalidField('reason', 'must be a string');
    const why = typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : null;
    if (action === 'reject' && why === null) throw invalidField('reason', 'is required to reject a campaign');
    return this.changeAudited(this.audited, id, action, async (current, tx, now) => {
      // Review is the operator's; the advertiser's people submit, pause, resume and archive.
      if (action === 'approve' || action === 'reject')
        requireOperator(this.actor, 'approve or reject campaigns');
      else requireChange(this.actor);
      const status = statusAfterAction(current, action as CampaignAction, now);
      const updated = (await tx.updateCampaign(
        id,
        {
          status,
          rejectionReason:
            action === 'reject' ? why : status === 'pending_review' ? null : current.rejectionReason,
        },
        now,
      ))!;
      return { after: updated, reason: why };
    });
  }
}
