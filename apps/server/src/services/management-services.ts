import type { Micros } from '../domain/money.js';
import type { Pace } from '../domain/pacing.js';
import type { CampaignIndex } from '../serving/campaign-index.js';
import type { ServingChanges } from '../serving/serving-changes.js';
import type { NumberedPageRequest, PageRequest, Store } from '../store/store.js';
import { AdvertiserService } from './advertisers.js';
import { auditActorNames, readAudit, readAuditPage, type Actor } from './audit.js';
import { CampaignList } from './campaign-list.js';
import { changesSinceApproval } from './campaign-review.js';
import { CampaignService } from './campaigns.js';
import { KeyFlagService } from './key-flags.js';
import { liveFigures, type FiguresQuery } from './live-figures.js';
import { namesOf, type NameRequest } from './names.js';
import { PartnerService } from './partners.js';
import { PlacementService } from './placements.js';
import { reportNames } from './report-format.js';
import { MoneySummaryService } from './money-summary.js';
import { ReportService, type Report } from './reports.js';
import { RevenueShareService } from './revenue-shares.js';
import { StatementService } from './statements.js';
import { explainCampaign, type WhyQuery } from './serving-explainer.js';
import { UserService } from './users.js';
import { WebhookService } from './webhooks.js';
import type { AddressAllowance } from '../domain/webhook-addresses.js';

/** What an instance's management services share, given once by `wiring.ts`. */
export interface ManagementDeps {
  store: Store;
  clock: () => number;
  /** Where people reach the dashboard: the start of one-time links. */
  publicUrl: string;
  /** This instance's serving state, told of each change fetches read once it commits. */
  serving: ServingChanges;
  /** The serving index of this instance, as fetches see it now (the explainer draws against it). */
  index: () => CampaignIndex;
  /** Each campaign's pace as this instance's pacing job last decided it (D16). */
  paceOf: (id: number) => Pace;
  /** The currency of every amount (`PLACARD_CURRENCY`). */
  currency: string;
  /** `PLACARD_BILLING_TIME_ZONE`: the zone billing dates are days of (D18). */
  billingTimeZone: string;
  /** `PLACARD_MINIMUM_PAYOUT` in micros: a partner statement below it carries its total forward. */
  minimumPayoutMicros: Micros;
  /** Where webhook endpoints may be besides public addresses (`PLACARD_WEBHOOKS_ALLOW_*`). */
  webhookAllowance?: AddressAllowance;
}

/** The constructor of a service that changes what fetches read. */
type ServedService<T> = new (store: Store, actor: Actor, clock: () => number, serving: ServingChanges) => T;

/**
 * The services the management API and the dashboard call, each for one actor: the only way their
 * routes reach the store, so scope, validation, audit and telling the serving index of a change
 * (`serving/serving-changes.ts`) happen in the service, once, whichever page or route asked.
 */
export class ManagementServices {
  constructor(private readonly deps: ManagementDeps) {}

  /** A service whose changes fetches read: told to the serving state once each commits. */
  private serving<T>(Service: ServedService<T>, actor: Actor): T {
    return new Service(this.deps.store, actor, this.deps.clock, this.deps.serving);
  }

  campaigns(actor: Actor): CampaignService {
    return this.serving(CampaignService, actor);
  }

  /** The campaigns list with each campaign's delivery, caps' progress and pacing. */
  campaignList(actor: Actor): CampaignList {
    return new CampaignList(this.deps.store, actor, this.deps.clock, this.deps.paceOf);
  }

  advertisers(actor: Actor): AdvertiserService {
    return this.serving(AdvertiserService, actor);
  }

  placements(actor: Actor): PlacementService {
    return this.serving(PlacementService, actor);
  }

  partners(actor: Actor): PartnerService {
    return this.serving(PartnerService, actor);
  }

  /** Partners' revenue shares (D18). */
  revenueShares(actor: Actor): RevenueShareService {
    return new RevenueShareService(this.deps.store, actor, this.deps.clock, this.deps.billingTimeZone);
  }

  /** Monthly statements, adjustments and payouts (D18). */
  statements(actor: Actor): StatementService {
    const { store, clock, billingTimeZone, currency, minimumPayoutMicros } = this.deps;
    return new StatementService(store, actor, clock, billingTimeZone, currency, minimumPayoutMicros);
  }

  webhooks(actor: Actor): WebhookService {
    return new WebhookService(this.deps.store, actor, this.deps.clock, this.deps.webhookAllowance);
  }

  keyFlags(actor: Actor): KeyFlagService {
    return this.serving(KeyFlagService, actor);
  }

  users(actor: Actor): UserService {
    return new UserService(this.deps.store, actor, this.deps.publicUrl, this.deps.clock);
  }

  /** The currency every amount the services give is in. */
  get currency(): string {
    return this.deps.currency;
  }

  /** `PLACARD_BILLING_TIME_ZONE`: the zone of billing dates and months (D18). */
  get billingTimeZone(): string {
    return this.deps.billingTimeZone;
  }

  reports(actor: Actor): ReportService {
    return new ReportService(this.deps.store, actor, this.deps.currency);
  }

  /** The operator's revenue, payouts and margin by month of the billing zone. */
  moneySummary(actor: Actor): MoneySummaryService {
    const { store, clock, currency, billingTimeZone } = this.deps;
    return new MoneySummaryService(store, actor, clock, currency, billingTimeZone);
  }

  /** The names behind a report's ids, as far as the actor may see them. */
  reportNames(actor: Actor, report: Report) {
    return reportNames(this.deps.store, actor, report);
  }

  /** The figures of a live report page, now. */
  liveFigures(actor: Actor, query: FiguresQuery) {
    return liveFigures(this.deps.store, actor, query, this.deps.clock(), this.deps.currency);
  }

  /** The names of accounts, as far as the actor may see them. */
  namesOf(actor: Actor, request: NameRequest) {
    return namesOf(this.deps.store, actor, request);
  }

  /** The audit log, for the operator's people. */
  audit(actor: Actor, filter: { objectType?: string; objectId?: string }, request: PageRequest) {
    return readAudit(this.deps.store, actor, filter, request);
  }

  /** One numbered page of the audit log, for the operator's people. */
  auditPage(actor: Actor, request: NumberedPageRequest) {
    return readAuditPage(this.deps.store, actor, request);
  }

  /** Who each audit actor is, in words. */
  auditActorNames(actor: Actor, ids: readonly string[]) {
    return auditActorNames(this.deps.store, actor, ids);
  }

  /** What changed in a campaign since it was last approved, for its review. */
  changesSinceApproval(actor: Actor, id: number) {
    return changesSinceApproval(this.deps.store, actor, id);
  }

  /** Why a campaign is or is not served, against this instance's index and paces. */
  explain(actor: Actor, id: number, query: WhyQuery) {
    const { store, index, clock, paceOf } = this.deps;
    return explainCampaign(store, actor, index(), clock(), id, query, paceOf);
  }
}
