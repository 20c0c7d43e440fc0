import { readAdvertiserBudget } from '../domain/advertiser-budgets.js';
import { FORECAST_WINDOW_MS, forecastBudget } from '../domain/budget-forecast.js';
import type { Micros } from '../domain/money.js';
import { alreadyExists, notFound, unprocessable, type FieldProblem } from '../domain/errors.js';
import { ADVERTISER_PRICING, isAdvertiserPricing } from '../domain/prices.js';
import type { Advertiser, NumberedPage, NumberedPageRequest, PageRequest } from '../store/store.js';
import { audit } from './audit.js';
import { requireChange, requireOperator, sees } from './scope.js';
import { ServedService, type AuditedObject } from './served-service.js';
import { trimmedText } from './text-field.js';

/** An advertiser as its changes are audited: found only by those who may see it. */
const ADVERTISER: AuditedObject<Advertiser> = {
  type: 'advertiser',
  find: async (store, id) => {
    const advertiser = await store.findAdvertiser(id);
    if (!advertiser) throw notFound(`advertiser ${id} not found`);
    return advertiser;
  },
  view: (advertiser) => advertiser,
};

/**
 * Advertisers: the accounts campaigns belong to, with their spend budgets (D18). A service that
 * changes what fetches read: setting a budget releases the campaigns a spent one held.
 */
export class AdvertiserService extends ServedService {
  async create(name: unknown): Promise<Advertiser> {
    requireOperator(this.actor, 'create advertisers');
    const checked = trimmedText('name', name);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      if (await tx.findAdvertiser(checked)) throw alreadyExists(`advertiser "${checked}" already exists`);
      const advertiser = await tx.createAdvertiser(checked, now);
      await audit(
        tx,
        this.actor,
        {
          objectType: 'advertiser',
          objectId: advertiser.id,
          action: 'create',
          before: null,
          after: advertiser,
        },
        now,
      );
      return advertiser;
    });
  }

  /**
   * Sets the advertiser's total and monthly budgets (`budget` as the management API takes it; null:
   * none), by the operator or the advertiser's own people, audited. Its campaigns held by a spent
   * budget are released; one still spent holds them again at their next billable event.
   */
  async setBudget(id: number, budget: unknown): Promise<Advertiser> {
    const problems: FieldProblem[] = [];
    const checked = readAdvertiserBudget(budget, 'budget', problems);
    if (problems.length > 0) throw unprocessable(`invalid budget of advertiser ${id}`, problems);
    return this.changeAudited(ADVERTISER, id, 'update', async (before, tx, now) => {
      if (!sees(this.actor, { kind: 'advertiser', id })) throw notFound(`advertiser ${id} not found`);
      requireChange(this.actor);
      await tx.setAdvertiserBudget(id, checked, now);
      return { after: { ...before, budget: checked, updatedAt: now }, reason: null };
    });
  }

  /**
   * Decides who sets the prices of the advertiser's campaigns (D18): `operator` (the operator
   * alone) or `advertiser` (its own people too). The operator's alone, audited; prices already set
   * stay as they are. The value it already has is no change, so anyone who may see the advertiser
   * may send back what they read.
   */
  async setPricing(id: number, pricing: unknown): Promise<Advertiser> {
    if (!isAdvertiserPricing(pricing))
      throw unprocessable(`invalid pricing of advertiser ${id}`, [
        { field: 'pricing', message: `must be one of ${ADVERTISER_PRICING.join(', ')}` },
      ]);
    const current = await this.get(id);
    if (current.pricing === pricing) return current;
    return this.changeAudited(ADVERTISER, id, 'update', async (before, tx, now) => {
      requireOperator(this.actor, "decide who sets an advertiser's campaign prices");
      await tx.setAdvertiserPricing(id, pricing, now);
      return { after: { ...before, pricing, updatedAt: now }, reason: null };
    });
  }

  /**
   * What the advertiser spent this billing month and in total, as its budgets count it, and when
   * each budget runs out at the pace of the last hour's spend (`forecast`).
   */
  async spend(id: number) {
    const { budget } = await this.get(id);
    const now = this.clock();
    const [spend, recent] = await Promise.all([
      this.store.advertiserSpend(id, now),
      this.store.advertiserSpendBetween(id, now - FORECAST_WINDOW_MS, now),
    ]);
    const forecast = (amount: Micros | null, spent: Micros, periodEnd: number | null) =>
      forecastBudget({ budget: amount, spent, recent, now, periodEnd });
    return {
      ...spend,
      forecast: {
        total: forecast(budget.totalMicros, spend.totalMicros, null),
        month: forecast(budget.monthlyMicros, spend.monthMicros, spend.monthEnd),
      },
    };
  }

  async get(id: number): Promise<Advertiser> {
    const advertiser = await this.store.findAdvertiser(id);
    // Another account's advertiser reads exactly like a missing one (D13).
    if (!advertiser || !sees(this.actor, { kind: 'advertiser', id }))
      throw notFound(`advertiser ${id} not found`);
    return advertiser;
  }

  /** Every advertiser for the operator; an advertiser's own for its people; none for a partner's. */
  async list(request?: PageRequest): Promise<Advertiser[]> {
    const account = this.actor.account;
    if (account.kind === 'operator') return this.store.listAdvertisers(request);
    const own = account.kind === 'advertiser' ? await this.store.findAdvertiser(account.id) : undefined;
    return own && (request?.after === undefined || own.id > request.after) ? [own] : [];
  }

  /** One numbered page of the advertisers the actor may see, newest first, with how many there are. */
  async page(request: NumberedPageRequest): Promise<NumberedPage<Advertiser>> {
    const account = this.actor.account;
    if (account.kind === 'operator') return this.store.advertiserPage(request);
    const own = account.kind === 'advertiser' ? await this.store.findAdvertiser(account.id) : undefined;
    const rows = own && request.offset === 0 ? [own] : [];
    return { rows, total: own ? 1 : 0 };
  }

  /** How many campaigns each of these advertisers has, for those the actor may see. */
  campaignCounts(ids: readonly number[]): Promise<Map<number, number>> {
    return this.store.countCampaigns(ids.filter((id) => sees(this.actor, { kind: 'advertiser', id })));
  }

  async rename(id: number, name: unknown): Promise<Advertiser> {
    const checked = trimmedText('name', name);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const before = await tx.findAdvertiser(id);
      if (!before || !sees(this.actor, { kind: 'advertiser', id }))
        throw notFound(`advertiser ${id} not found`);
      requireOperator(this.actor, 'rename advertisers');
      const clash = await tx.findAdvertiser(checked);
      if (clash && clash.id !== id) throw alreadyExists(`advertiser "${checked}" already exists`);
      await tx.renameAdvertiser(id, checked, now);
      const after = (await tx.findAdvertiser(id))!;
      await audit(
        tx,
        this.actor,
        { objectType: 'advertiser', objectId: id, action: 'update', before, after },
        now,
      );
      return after;
    });
  }
}
