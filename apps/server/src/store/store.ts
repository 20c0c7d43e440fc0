import { sql } from 'kysely';
import type { Connection, Engine } from './connect.js';
import { openContext, type StoreContext } from './context.js';
import type { EngineTraits } from './engine-traits.js';
import { migrateToLatest, pendingMigrations, type MigrationReport } from './migrate.js';
import type { Db } from './schema.js';
import * as adminTokens from './admin-tokens.js';
import * as advertisers from './advertisers.js';
import * as advertiserBudgets from './advertiser-budgets.js';
import * as audit from './audit.js';
import * as campaignRollups from './campaign-rollups.js';
import * as campaigns from './campaigns.js';
import * as campaignDelivery from './campaign-delivery.js';
import * as events from './events.js';
import * as keyFlags from './key-flags.js';
import * as meta from './meta.js';
import * as pacing from './pacing.js';
import * as partners from './partners.js';
import * as people from './people.js';
import * as placements from './placements.js';
import * as revenueShares from './revenue-shares.js';
import * as statements from './statements.js';
import * as webhooks from './webhooks.js';

export type {
  Advertiser,
  AdvertiserImport,
  AdminTokenRecord,
  ApiKeyRecord,
  ApiKeyStatus,
  AuditEntry,
  AuditRecord,
  BatchOutcome,
  CampaignFilter,
  CampaignPatch,
  CampaignPriceRecord,
  CampaignSort,
  CampaignSortKey,
  EventKind,
  ImportSummary,
  LiveKey,
  LinkPurpose,
  NumberedPage,
  NumberedPageRequest,
  PageRequest,
  Partner,
  Placement,
  RateLimits,
  SessionRecord,
  TrackedEvent,
  UserLinkRecord,
  UserRecord,
} from './rows.js';
export type { Db } from './schema.js';
export { CAMPAIGN_SORTS, emptyBatchOutcome } from './rows.js';
export type { CampaignDelivery } from './campaign-delivery.js';
export type { KeyEventCount, KeyFlagRecord, KeySliceCount } from './key-flags.js';
export type { RevenueShare } from './revenue-shares.js';
export type { WebhookAttemptRecord, WebhookEndpointRecord, WebhookMessageRecord } from './webhooks.js';
export type {
  AdjustmentRecord,
  FlatCampaign,
  PaymentRecord,
  StatementAccountKind,
  StatementLineRecord,
  StatementRecord,
} from './statements.js';

/** How a store is opened. */
export interface StoreOptions {
  /** `PLACARD_BILLING_TIME_ZONE` (default UTC): the months advertisers' monthly budgets count. */
  billingTimeZone?: string;
}

/**
 * The storage API every service uses: a façade over one module per aggregate (placements,
 * advertisers, campaigns, partners and keys, admin tokens, people, audit, events, meta), each a set of
 * functions over Kysely that serve SQLite and PostgreSQL alike; only the event ledger differs per
 * engine, behind one interface chosen when the store is opened. The contract test suite
 * (`store.contract.test.ts`) runs against both engines. `transaction` hands the
 * callback a Store bound to one transaction, so a change and its audit entry commit together.
 */
export class Store {
  private readonly context: StoreContext;

  /** `options` of a newly opened store, or the context of one bound to a transaction (`transaction`). */
  constructor(
    private readonly connection: Connection,
    options: StoreOptions | StoreContext = {},
  ) {
    this.context = 'db' in options ? options : openContext(connection, options.billingTimeZone);
  }

  /** The engine's name, for logs and `placard` output; what differs between engines is `traits`. */
  get engine(): Engine {
    return this.connection.engine;
  }

  /** What differs between the engines (commits at once, locks), chosen when the store was opened. */
  get traits(): EngineTraits {
    return this.context.traits;
  }

  /** Where the store is: the SQLite file, or the PostgreSQL server and database. */
  get location(): string {
    return this.connection.location;
  }

  /** The database, or the transaction this store is bound to. */
  get db(): Db {
    return this.context.db;
  }

  /** `fn` of a store module, called with this store's context. */
  private bound<A extends unknown[], R>(fn: (ctx: StoreContext, ...args: A) => R): (...args: A) => R {
    return (...args) => fn(this.context, ...args);
  }

  /** Applies pending migrations, or only those up to the one named `until` (tests of an upgrade). */
  migrate(until?: string): Promise<MigrationReport> {
    return migrateToLatest(this.connection, until);
  }

  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.connection);
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** A round trip to the store (readiness checks). */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /** Runs `body` in one transaction; inside a transaction it simply joins it. */
  async transaction<T>(body: (store: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return body(this);
    return this.db.transaction().execute((db) => body(new Store(this.connection, { ...this.context, db })));
  }

  // The change feed the serving state polls, and the store's own settings (`meta`) (meta.ts)
  readonly changeVersions = this.bound(meta.changeVersions);
  readonly campaignChangesBetween = this.bound(meta.campaignChangesBetween);
  readonly pruneCampaignChanges = this.bound(meta.pruneCampaignChanges);
  readonly getMeta = this.bound(meta.getMeta);
  readonly setMeta = this.bound(meta.setMeta);
  readonly claimMeta = this.bound(meta.claimMeta);

  // The placement registry (D1) (placements.ts)
  readonly listPlacements = this.bound(placements.listPlacements);
  readonly placementPage = this.bound(placements.placementPage);
  readonly getPlacement = this.bound(placements.getPlacement);
  readonly addPlacement = this.bound(placements.addPlacement);
  readonly updatePlacement = this.bound(placements.updatePlacement);

  // Advertisers (advertisers.ts)
  readonly createAdvertiser = this.bound(advertisers.createAdvertiser);
  readonly findAdvertiser = this.bound(advertisers.findAdvertiser);
  readonly listAdvertisers = this.bound(advertisers.listAdvertisers);
  readonly advertiserNames = this.bound(advertisers.advertiserNames);
  readonly advertisersWithCampaignsIn = this.bound(advertisers.advertisersWithCampaignsIn);
  readonly advertiserPage = this.bound(advertisers.advertiserPage);
  readonly renameAdvertiser = this.bound(advertisers.renameAdvertiser);
  readonly setAdvertiserBudget = this.bound(advertiserBudgets.setAdvertiserBudget);
  readonly setAdvertiserPricing = this.bound(advertisers.setAdvertiserPricing);
  readonly advertiserSpend = this.bound(advertiserBudgets.advertiserSpend);
  readonly advertiserSpendBetween = this.bound(advertiserBudgets.advertiserSpendBetween);
  readonly countCampaigns = this.bound(advertisers.countCampaigns);

  // Campaigns with their placements (campaigns.ts)
  readonly importCampaigns = this.bound(campaigns.importCampaigns);
  readonly createCampaign = this.bound(campaigns.createCampaign);
  readonly getCampaigns = this.bound(campaigns.getCampaigns);
  readonly runningEvenCampaigns = this.bound(pacing.runningEvenCampaigns);
  readonly capCounters = this.bound(pacing.capCounters);
  readonly placementTraffic = this.bound(pacing.placementTraffic);
  readonly campaignSpendBetween = this.bound(pacing.campaignSpendBetween);
  readonly getCampaign = this.bound(campaigns.getCampaign);
  readonly listCampaigns = this.bound(campaigns.listCampaigns);
  readonly campaignPage = this.bound(campaigns.campaignPage);
  readonly campaignDelivery = this.bound(campaignDelivery.campaignDelivery);
  readonly runningCampaignPages = this.bound(campaigns.runningCampaignPages);
  readonly campaignsDueForTimedStatus = this.bound(campaigns.campaignsDueForTimedStatus);
  readonly moveCampaignStatus = this.bound(campaigns.moveCampaignStatus);
  readonly updateCampaign = this.bound(campaigns.updateCampaign);
  readonly campaignPrices = this.bound(campaigns.campaignPrices);

  // Partners, their API keys, and what the serving state loads of the keys (live keys with their limits) (partners.ts)
  readonly createPartner = this.bound(partners.createPartner);
  readonly findPartner = this.bound(partners.findPartner);
  readonly listPartners = this.bound(partners.listPartners);
  readonly partnerPage = this.bound(partners.partnerPage);
  readonly updatePartner = this.bound(partners.updatePartner);
  readonly createApiKey = this.bound(partners.createApiKey);
  readonly getApiKey = this.bound(partners.getApiKey);
  readonly apiKeyPage = this.bound(partners.apiKeyPage);
  readonly listApiKeys = this.bound(partners.listApiKeys);
  readonly updateApiKey = this.bound(partners.updateApiKey);
  readonly revokeApiKey = this.bound(partners.revokeApiKey);
  readonly loadLiveKeys = this.bound(partners.loadLiveKeys);
  readonly recordKeyUsage = this.bound(partners.recordKeyUsage);

  // Partners' revenue shares, only ever added (revenue-shares.ts)
  readonly addRevenueShare = this.bound(revenueShares.addRevenueShare);
  readonly listRevenueShares = this.bound(revenueShares.listRevenueShares);

  // Monthly statements, their adjustments and payments, only ever added, and the figures they are issued from (statements.ts)
  readonly issuedMonths = this.bound(statements.issuedMonths);
  readonly recordIssuedMonth = this.bound(statements.recordIssuedMonth);
  readonly firstChargedMinute = this.bound(statements.firstChargedMinute);
  readonly flatCampaigns = this.bound(statements.flatCampaigns);
  readonly campaignMonth = this.bound(statements.campaignMonth);
  readonly partnerMonth = this.bound(statements.partnerMonth);
  readonly monthDisagreements = this.bound(statements.monthDisagreements);
  readonly insertStatement = this.bound(statements.insertStatement);
  readonly listStatements = this.bound(statements.listStatements);
  readonly latestStatement = this.bound(statements.latestStatement);
  readonly statementLines = this.bound(statements.statementLines);
  readonly addAdjustment = this.bound(statements.addAdjustment);
  readonly listAdjustments = this.bound(statements.listAdjustments);
  readonly addPayment = this.bound(statements.addPayment);
  readonly paymentsOf = this.bound(statements.paymentsOf);

  // Admin tokens (only their digests are stored) (admin-tokens.ts)
  readonly createAdminToken = this.bound(adminTokens.createAdminToken);
  readonly findAdminToken = this.bound(adminTokens.findAdminToken);
  readonly getAdminToken = this.bound(adminTokens.getAdminToken);
  readonly listAdminTokens = this.bound(adminTokens.listAdminTokens);
  readonly updateAdminToken = this.bound(adminTokens.updateAdminToken);
  readonly countAdminTokens = this.bound(adminTokens.countAdminTokens);

  // People: users, their one-time links and sessions (people.ts)
  readonly createUser = this.bound(people.createUser);
  readonly getUser = this.bound(people.getUser);
  readonly findUserForSignIn = this.bound(people.findUserForSignIn);
  readonly listUsers = this.bound(people.listUsers);
  readonly userPage = this.bound(people.userPage);
  readonly updateUser = this.bound(people.updateUser);
  readonly createUserLink = this.bound(people.createUserLink);
  readonly findUserLink = this.bound(people.findUserLink);
  readonly useUserLink = this.bound(people.useUserLink);
  readonly createSession = this.bound(people.createSession);
  readonly findSession = this.bound(people.findSession);
  readonly listSessions = this.bound(people.listSessions);
  readonly touchSession = this.bound(people.touchSession);
  readonly endSessions = this.bound(people.endSessions);

  // The audit log (audit.ts)
  readonly appendAudit = this.bound(audit.appendAudit);
  readonly listAudit = this.bound(audit.listAudit);
  readonly auditPage = this.bound(audit.auditPage);

  // Tracked events (events.ts)
  readonly insertEvents = this.bound(events.insertEvents);
  readonly pruneEvents = this.bound(events.pruneEvents);
  readonly pruneIdempotencyKeys = this.bound(events.pruneIdempotencyKeys);
  readonly ensureEventPartitions = this.bound(events.ensureEventPartitions);
  readonly dropExpiredEventPartitions = this.bound(events.dropExpiredEventPartitions);
  readonly eventPartitions = this.bound(events.eventPartitions);
  readonly compactRollups = this.bound(campaignRollups.compactRollups);
  readonly foldAppended = this.bound(campaignRollups.foldAppended);
  readonly campaignTotals = this.bound(events.campaignTotals);
  readonly countEvents = this.bound(events.countEvents);

  // Webhooks (D19): endpoints, the outbox, the delivery job's claims and attempts (webhooks.ts)
  readonly createWebhookEndpoint = this.bound(webhooks.createWebhookEndpoint);
  readonly getWebhookEndpoint = this.bound(webhooks.getWebhookEndpoint);
  readonly listWebhookEndpoints = this.bound(webhooks.listWebhookEndpoints);
  readonly updateWebhookEndpoint = this.bound(webhooks.updateWebhookEndpoint);
  readonly enqueueWebhooks = this.bound(webhooks.enqueueWebhooks);
  readonly enqueueWebhookFor = this.bound(webhooks.enqueueWebhookFor);
  readonly dueWebhookEndpoints = this.bound(webhooks.dueWebhookEndpoints);
  readonly claimWebhookEndpoint = this.bound(webhooks.claimWebhookEndpoint);
  readonly renewWebhookClaim = this.bound(webhooks.renewWebhookClaim);
  readonly releaseWebhookEndpoint = this.bound(webhooks.releaseWebhookEndpoint);
  readonly waitingWebhookMessages = this.bound(webhooks.waitingWebhookMessages);
  readonly recordWebhookAttempt = this.bound(webhooks.recordWebhookAttempt);
  readonly webhookMessages = this.bound(webhooks.webhookMessages);
  readonly getWebhookMessage = this.bound(webhooks.getWebhookMessage);
  readonly webhookAttempts = this.bound(webhooks.webhookAttempts);
  readonly replayWebhookMessage = this.bound(webhooks.replayWebhookMessage);
  readonly noticeExpiringKeys = this.bound(webhooks.noticeExpiringKeys);

  // Key flags (D15): the traffic the flag job judges, the flags and their review (key-flags.ts)
  readonly saveKeyFlag = this.bound(keyFlags.saveKeyFlag);
  readonly lastReview = this.bound(keyFlags.lastReview);
  readonly flaggedKeys = this.bound(keyFlags.flaggedKeys);
  readonly getKeyFlag = this.bound(keyFlags.getKeyFlag);
  readonly listKeyFlags = this.bound(keyFlags.listKeyFlags);
  readonly keyFlagPage = this.bound(keyFlags.keyFlagPage);
  readonly reviewKeyFlag = this.bound(keyFlags.reviewKeyFlag);
}
