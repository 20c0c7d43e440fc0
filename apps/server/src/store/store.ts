import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Selectable } from 'kysely';
import {
  NO_CAPS,
  totalCapReached,
  type Campaign,
  type CampaignInput,
  type CampaignStatus,
  type Totals,
} from '../domain/campaigns.js';
import { localDate, startOfNextLocalDay } from '../domain/time-zones.js';
import { keyPolicies, type KeyPolicies } from '../domain/rate-limits.js';
import { pruneEvents, pruneIdempotencyKeys, type SettledBatch } from './event-ledger.js';
import { storeBatchSqlite } from './event-ledger-sqlite.js';
import { storeBatchPostgres } from './event-ledger-postgres.js';
import type { Connection, Engine } from './connect.js';
import { migrateToLatest, pendingMigrations, type MigrationReport } from './migrate.js';
import {
  campaignColumns,
  toAdminToken,
  toApiKey,
  toCampaign,
  toPartner,
  type AdminTokenRecord,
  type EventKind,
  type TrackedEvent,
  type ApiKeyRecord,
  type ApiKeyStatus,
  type Partner,
  type RateLimits,
} from './rows.js';
import type { CampaignTable, Db } from './schema.js';

export type { AdminTokenRecord, ApiKeyRecord, ApiKeyStatus, Partner, RateLimits } from './rows.js';

/** Every column of an admin token but its digest, which never leaves the store. */
const ADMIN_TOKEN_COLUMNS = [
  'id',
  'label',
  'display_prefix',
  'scope',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;

export interface Placement {
  id: string;
  description: string;
  enabled: boolean;
}

export interface Advertiser {
  id: number;
  name: string;
  createdAt: number;
  updatedAt: number;
}

/** What the auth layer needs to know about a key, indexed by digest. */
export interface LiveKey {
  id: number;
  partnerId: number;
  digest: string;
  status: Exclude<ApiKeyStatus, 'revoked'>;
  /** A rotated key stops working at this instant. */
  expiresAt: number | null;
  /** Categories the key's partner never receives. */
  blockedCategories: readonly string[];
  /** The key's rate limits (D7), its own or the defaults. */
  policies: KeyPolicies;
}

export type { EventKind, TrackedEvent } from './rows.js';

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

export interface AuditEntry {
  at: number;
  actor: string;
  objectType: string;
  objectId: string;
  action: string;
  reason: string | null;
  before: unknown;
  after: unknown;
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
  /** Campaigns completed by reaching a total cap. */
  completed: number[];
  /** Campaigns held for the rest of their day by a daily cap. */
  cappedForTheDay: number[];
  /** Events stored, by `kind:verdict` (for metrics). */
  stored: Map<string, number>;
}

export type CampaignPatch = Partial<CampaignInput> & {
  rejectionReason?: string | null;
  cappedUntil?: number | null;
};

export type { Db } from './schema.js';

const DEFAULT_PAGE = 50;

function page<T extends { where: (...args: never[]) => T }>(
  query: T,
  request: PageRequest,
  idColumn: string,
): T {
  // Typed loosely on purpose: every paged table has a numeric `id` column, which Kysely's types
  // cannot say of a generic query.
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
  let q = query as any;
  const newestFirst = request.newestFirst === true;
  if (request.after !== undefined) q = q.where(idColumn, newestFirst ? '<' : '>', request.after);
  return q.orderBy(idColumn, newestFirst ? 'desc' : 'asc').limit(request.limit ?? DEFAULT_PAGE);
  /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
}

/**
 * The storage API every service uses. One implementation over Kysely serves SQLite and PostgreSQL;
 * the contract test suite (`store.contract.test.ts`) runs against both. `transaction` hands the
 * callback a Store bound to one transaction, so a change and its audit entry commit together.
 */
export class Store {
  readonly engine: Engine;
  readonly location: string;

  constructor(
    private readonly connection: Connection,
    readonly db: Db = connection.db,
  ) {
    this.engine = connection.engine;
    this.location = connection.location;
  }

  /**
   * The SQLite handle under Kysely. SQLite has one connection, so statements run on it inside a
   * Kysely transaction belong to that transaction.
   */
  private sqliteHandle(): BetterSqlite3.Database {
    if (!this.connection.sqlite) throw new Error('this SQLite store has no database handle');
    return this.connection.sqlite;
  }

  migrate(): Promise<MigrationReport> {
    return migrateToLatest(this.connection);
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
    return this.db.transaction().execute((tx) => body(new Store(this.connection, tx)));
  }

  // ---- change feed -------------------------------------------------------------------------

  /** Current version of each watched topic; a higher number means its tables changed. */
  async changeVersions(): Promise<Record<string, number>> {
    const rows = await this.db.selectFrom('change_versions').select(['topic', 'version']).execute();
    return Object.fromEntries(rows.map((row) => [row.topic, Number(row.version)]));
  }

  // ---- placements --------------------------------------------------------------------------

  async listPlacements(): Promise<Placement[]> {
    const rows = await this.db.selectFrom('placements').selectAll().orderBy('id').execute();
    return rows.map((row) => ({ id: row.id, description: row.description, enabled: row.enabled === 1 }));
  }

  async getPlacement(id: string): Promise<Placement | undefined> {
    const row = await this.db.selectFrom('placements').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, description: row.description, enabled: row.enabled === 1 };
  }

  async addPlacement(placement: Placement, now = Date.now()): Promise<void> {
    await this.db
      .insertInto('placements')
      .values({
        id: placement.id,
        description: placement.description,
        enabled: placement.enabled ? 1 : 0,
        created_at: now,
      })
      .execute();
  }

  async updatePlacement(id: string, changes: { description?: string; enabled?: boolean }): Promise<void> {
    await this.db
      .updateTable('placements')
      .set({
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled ? 1 : 0 }),
      })
      .where('id', '=', id)
      .execute();
  }

  // ---- advertisers -------------------------------------------------------------------------

  async createAdvertiser(name: string, now = Date.now()): Promise<Advertiser> {
    const row = await this.db
      .insertInto('advertisers')
      .values({ name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  async findAdvertiser(idOrName: number | string): Promise<Advertiser | undefined> {
    const row = await this.db
      .selectFrom('advertisers')
      .selectAll()
      .where(typeof idOrName === 'number' ? 'id' : 'name', '=', idOrName)
      .executeTakeFirst();
    return row && { id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  async listAdvertisers(request: PageRequest = {}): Promise<Advertiser[]> {
    const rows = await page(this.db.selectFrom('advertisers').selectAll(), request, 'id').execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }));
  }

  async renameAdvertiser(id: number, name: string, now = Date.now()): Promise<void> {
    await this.db.updateTable('advertisers').set({ name, updated_at: now }).where('id', '=', id).execute();
  }

  // ---- campaigns ---------------------------------------------------------------------------

  /**
   * Imports advertisers (matched by name, created when new) and their campaigns in one transaction:
   * either everything is stored or nothing is.
   */
  async importCampaigns(advertisers: AdvertiserImport[], now = Date.now()): Promise<ImportSummary> {
    return this.transaction(async (tx) => {
      const summary: ImportSummary = {
        advertisersCreated: 0,
        advertisersExisting: 0,
        campaignsCreated: 0,
        campaignIds: [],
      };
      for (const advertiser of advertisers) {
        let existing = await tx.findAdvertiser(advertiser.name);
        if (existing) summary.advertisersExisting++;
        else {
          existing = await tx.createAdvertiser(advertiser.name, now);
          summary.advertisersCreated++;
        }
        for (const campaign of advertiser.campaigns) {
          summary.campaignIds.push(await tx.createCampaign(existing.id, campaign, now));
          summary.campaignsCreated++;
        }
      }
      return summary;
    });
  }

  /** Inserts a campaign with its placements; returns its id. */
  async createCampaign(advertiserId: number, input: CampaignInput, now = Date.now()): Promise<number> {
    const { id } = await this.db
      .insertInto('campaigns')
      .values({
        ...campaignColumns(input),
        advertiser_id: advertiserId,
        title: input.title,
        destination_url: input.destinationUrl,
        status: input.status,
        priority: input.priority,
        weight: input.weight,
        countries: JSON.stringify(input.countries),
        devices: JSON.stringify(input.devices),
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await this.db
      .insertInto('campaign_placements')
      .values(input.placements.map((placement_id) => ({ campaign_id: id, placement_id })))
      .execute();
    return id;
  }

  /** Campaigns by id, read in pages (for large imports). */
  async getCampaigns(ids: readonly number[]): Promise<Campaign[]> {
    const wanted = new Set(ids);
    const sorted = [...ids].sort((a, b) => a - b);
    const found: Campaign[] = [];
    for (let start = 0; start < sorted.length; start += 5000) {
      const chunk = sorted.slice(start, start + 5000);
      const page = await this.queryCampaigns(
        {},
        { after: (chunk[0] as number) - 1, limit: 1_000_000, upTo: chunk[chunk.length - 1] },
      );
      found.push(...page.filter((campaign) => wanted.has(campaign.id)));
    }
    return found;
  }

  async getCampaign(id: number): Promise<Campaign | undefined> {
    const [campaign] = await this.queryCampaigns({ id }, {});
    return campaign;
  }

  async listCampaigns(
    filter: CampaignFilter = {},
    request: PageRequest = { limit: 1_000_000 },
  ): Promise<Campaign[]> {
    return this.queryCampaigns(filter, request);
  }

  /**
   * Running campaigns with their placements, in pages ordered by id: the input of the serving index.
   * Paging keeps memory flat however many campaigns there are.
   */
  async *runningCampaignPages(pageSize = 5000): AsyncGenerator<Campaign[]> {
    let after = 0;
    for (;;) {
      const found = await this.queryCampaigns({ status: 'running' }, { after, limit: pageSize });
      if (found.length === 0) return;
      yield found;
      after = (found[found.length - 1] as Campaign).id;
    }
  }

  /**
   * Campaigns whose start or end time has come (scheduled to start, or ending while live). Two
   * queries, each answered from a (status, time) index, rather than one OR that scans every row.
   */
  async campaignsDueForTimedStatus(now: number): Promise<Campaign[]> {
    const starting = await this.db
      .selectFrom('campaigns')
      .selectAll()
      .where('status', '=', 'scheduled')
      .where((eb) => eb.or([eb('start_at', 'is', null), eb('start_at', '<=', now)]))
      .limit(1000)
      .execute();
    const ending = await this.db
      .selectFrom('campaigns')
      .selectAll()
      .where('status', 'in', ['scheduled', 'running', 'paused'])
      .where('end_at', '<=', now)
      .limit(1000)
      .execute();
    const byId = new Map([...starting, ...ending].map((row) => [row.id, row]));
    return this.withPlacements([...byId.values()].sort((a, b) => a.id - b.id));
  }

  /**
   * Moves a campaign from one status to another only if it is still in the first: safe when
   * several instances run the same clock job. Returns whether this call made the move.
   */
  async moveCampaignStatus(
    id: number,
    from: CampaignStatus,
    to: CampaignStatus,
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('campaigns')
      .set({ status: to, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async queryCampaigns(
    filter: CampaignFilter & { id?: number },
    request: PageRequest & { upTo?: number },
  ): Promise<Campaign[]> {
    let query = this.db.selectFrom('campaigns').selectAll('campaigns');
    if (filter.id !== undefined) query = query.where('campaigns.id', '=', filter.id);
    if (filter.status !== undefined) query = query.where('campaigns.status', '=', filter.status);
    if (filter.advertiserId !== undefined)
      query = query.where('campaigns.advertiser_id', '=', filter.advertiserId);
    if (filter.placement !== undefined) {
      const placement = filter.placement;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('campaign_placements as cp')
            .select('cp.campaign_id')
            .whereRef('cp.campaign_id', '=', 'campaigns.id')
            .where('cp.placement_id', '=', placement),
        ),
      );
    }
    if (request.after !== undefined) query = query.where('campaigns.id', '>', request.after);
    if (request.upTo !== undefined) query = query.where('campaigns.id', '<=', request.upTo);
    query = query.orderBy('campaigns.id').limit(request.limit ?? DEFAULT_PAGE);
    return this.withPlacements(await query.execute());
  }

  /**
   * Joins placements to campaign rows sorted by id, with one query: by id list for a few rows (which
   * may be far apart), by id range for a page of many.
   */
  private async withPlacements(rows: Selectable<CampaignTable>[]): Promise<Campaign[]> {
    if (rows.length === 0) return [];
    const first = (rows[0] as { id: number }).id;
    const last = (rows[rows.length - 1] as { id: number }).id;
    let query = this.db.selectFrom('campaign_placements').select(['campaign_id', 'placement_id']);
    query =
      rows.length <= 500
        ? query.where(
            'campaign_id',
            'in',
            rows.map((row) => row.id),
          )
        : query.where('campaign_id', '>=', first).where('campaign_id', '<=', last);
    const links = await query.orderBy('placement_id').execute();
    const placementsByCampaign = new Map<number, string[]>();
    for (const link of links) {
      const list = placementsByCampaign.get(link.campaign_id);
      if (list) list.push(link.placement_id);
      else placementsByCampaign.set(link.campaign_id, [link.placement_id]);
    }
    return rows.map((row) => toCampaign(row, placementsByCampaign.get(row.id) ?? []));
  }

  /** Applies a validated patch; returns the updated campaign, or undefined when it does not exist. */
  async updateCampaign(id: number, patch: CampaignPatch, now = Date.now()): Promise<Campaign | undefined> {
    return this.transaction(async (tx) => {
      const result = await tx.db
        .updateTable('campaigns')
        .set({
          ...campaignColumns(patch),
          ...(patch.rejectionReason !== undefined && { rejection_reason: patch.rejectionReason }),
          ...(patch.cappedUntil !== undefined && { capped_until: patch.cappedUntil }),
          updated_at: now,
        })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      if (patch.placements !== undefined) {
        await tx.db.deleteFrom('campaign_placements').where('campaign_id', '=', id).execute();
        await tx.db
          .insertInto('campaign_placements')
          .values(patch.placements.map((placement_id) => ({ campaign_id: id, placement_id })))
          .execute();
      }
      return tx.getCampaign(id);
    });
  }

  // ---- partners and keys -------------------------------------------------------------------

  async createPartner(name: string, now = Date.now()): Promise<Partner> {
    const row = await this.db
      .insertInto('partners')
      .values({ name, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toPartner(row);
  }

  async findPartner(idOrName: number | string): Promise<Partner | undefined> {
    const row = await this.db
      .selectFrom('partners')
      .selectAll()
      .where(typeof idOrName === 'number' ? 'id' : 'name', '=', idOrName)
      .executeTakeFirst();
    return row && toPartner(row);
  }

  async listPartners(request: PageRequest = { limit: 1_000_000 }): Promise<Partner[]> {
    return (await page(this.db.selectFrom('partners').selectAll(), request, 'id').execute()).map(toPartner);
  }

  async updatePartner(
    id: number,
    changes: { name?: string; blockedCategories?: string[] },
    now = Date.now(),
  ) {
    await this.db
      .updateTable('partners')
      .set({
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.blockedCategories !== undefined && {
          blocked_categories: JSON.stringify(changes.blockedCategories),
        }),
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  }

  async createApiKey(
    key: { partnerId: number; label: string | null; displayPrefix: string; digest: string },
    now = Date.now(),
  ): Promise<ApiKeyRecord> {
    const row = await this.db
      .insertInto('api_keys')
      .values({
        partner_id: key.partnerId,
        label: key.label,
        display_prefix: key.displayPrefix,
        digest: key.digest,
        status: 'active',
        created_at: now,
        revoked_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toApiKey(row);
  }

  private keysWithUsage() {
    return this.db
      .selectFrom('api_keys')
      .leftJoin('api_key_usage', 'api_key_usage.api_key_id', 'api_keys.id')
      .selectAll('api_keys')
      .select([
        'api_key_usage.last_used_at',
        'api_key_usage.browser_requests',
        'api_key_usage.last_browser_request_at',
      ]);
  }

  async getApiKey(id: number): Promise<ApiKeyRecord | undefined> {
    const row = await this.keysWithUsage().where('api_keys.id', '=', id).executeTakeFirst();
    return row && toApiKey(row);
  }

  async listApiKeys(
    partnerId?: number,
    request: PageRequest = { limit: 1_000_000 },
  ): Promise<ApiKeyRecord[]> {
    let query = this.keysWithUsage();
    if (partnerId !== undefined) query = query.where('api_keys.partner_id', '=', partnerId);
    return (await page(query, request, 'api_keys.id').execute()).map(toApiKey);
  }

  /** Changes a key's lifecycle columns; returns it, or undefined when no such key exists. */
  async updateApiKey(
    id: number,
    changes: {
      status?: ApiKeyStatus;
      revokedAt?: number | null;
      expiresAt?: number | null;
      suspendedReason?: string | null;
      suspendedAt?: number | null;
      label?: string | null;
      rateLimits?: RateLimits;
    },
  ): Promise<ApiKeyRecord | undefined> {
    await this.db
      .updateTable('api_keys')
      .set({
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.revokedAt !== undefined && { revoked_at: changes.revokedAt }),
        ...(changes.expiresAt !== undefined && { expires_at: changes.expiresAt }),
        ...(changes.suspendedReason !== undefined && { suspended_reason: changes.suspendedReason }),
        ...(changes.suspendedAt !== undefined && { suspended_at: changes.suspendedAt }),
        ...(changes.label !== undefined && { label: changes.label }),
        ...(changes.rateLimits !== undefined && {
          fetch_rate: changes.rateLimits.fetchRate,
          fetch_burst: changes.rateLimits.fetchBurst,
          events_rate: changes.rateLimits.eventsRate,
          events_burst: changes.rateLimits.eventsBurst,
        }),
      })
      .where('id', '=', id)
      .execute();
    return this.getApiKey(id);
  }

  /** Marks a key revoked; returns it, or undefined when no such key exists. */
  async revokeApiKey(id: number, now = Date.now()): Promise<ApiKeyRecord | undefined> {
    return this.updateApiKey(id, { status: 'revoked', revokedAt: now });
  }

  /** Keys that can authenticate (active or suspended), with their partner's blocked categories. */
  async loadLiveKeys(): Promise<LiveKey[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .innerJoin('partners', 'partners.id', 'api_keys.partner_id')
      .select([
        'api_keys.id',
        'api_keys.partner_id',
        'api_keys.digest',
        'api_keys.status',
        'api_keys.expires_at',
        'api_keys.fetch_rate',
        'api_keys.fetch_burst',
        'api_keys.events_rate',
        'api_keys.events_burst',
        'partners.blocked_categories',
      ])
      .where('api_keys.status', '!=', 'revoked')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      partnerId: row.partner_id,
      digest: row.digest,
      status: row.status as LiveKey['status'],
      expiresAt: row.expires_at,
      blockedCategories: JSON.parse(row.blocked_categories) as string[],
      policies: keyPolicies({
        fetchRate: row.fetch_rate,
        fetchBurst: row.fetch_burst,
        eventsRate: row.events_rate,
        eventsBurst: row.events_burst,
      }),
    }));
  }

  /**
   * Records when keys were last used and their refused browser requests (batched by the caller;
   * not a watched table, so it never triggers an index reload).
   */
  async recordKeyUsage(
    lastUsed: ReadonlyMap<number, number>,
    browserUses: ReadonlyMap<number, { count: number; at: number }> = new Map(),
  ): Promise<void> {
    for (const [apiKeyId, at] of lastUsed) {
      const browser = browserUses.get(apiKeyId);
      await this.db
        .insertInto('api_key_usage')
        .values({
          api_key_id: apiKeyId,
          last_used_at: at,
          browser_requests: browser?.count ?? 0,
          last_browser_request_at: browser?.at ?? null,
        })
        .onConflict((oc) =>
          oc.column('api_key_id').doUpdateSet((eb) => ({
            last_used_at: at,
            browser_requests: eb('api_key_usage.browser_requests', '+', browser?.count ?? 0),
            last_browser_request_at: eb.fn.coalesce(
              eb.ref('excluded.last_browser_request_at'),
              eb.ref('api_key_usage.last_browser_request_at'),
            ),
          })),
        )
        .execute();
    }
  }

  // ---- admin tokens ------------------------------------------------------------------------

  async createAdminToken(
    token: { digest: string; displayPrefix: string; label: string; expiresAt?: number | null },
    now = Date.now(),
  ): Promise<AdminTokenRecord> {
    const row = await this.db
      .insertInto('admin_tokens')
      .values({
        digest: token.digest,
        display_prefix: token.displayPrefix,
        label: token.label,
        created_at: now,
        revoked_at: null,
        expires_at: token.expiresAt ?? null,
      })
      .returning(ADMIN_TOKEN_COLUMNS)
      .executeTakeFirstOrThrow();
    return toAdminToken(row);
  }

  /** The token with this digest, revoked and expired ones included: the caller decides. */
  findAdminToken(digest: string): Promise<AdminTokenRecord | undefined> {
    return this.oneAdminToken('digest', digest);
  }

  getAdminToken(id: number): Promise<AdminTokenRecord | undefined> {
    return this.oneAdminToken('id', id);
  }

  private async oneAdminToken(column: 'id' | 'digest', value: number | string) {
    const row = await this.db
      .selectFrom('admin_tokens')
      .select(ADMIN_TOKEN_COLUMNS)
      .where(column, '=', value)
      .executeTakeFirst();
    return row && toAdminToken(row);
  }

  async listAdminTokens(request: PageRequest = { limit: 1_000_000 }): Promise<AdminTokenRecord[]> {
    const query = this.db.selectFrom('admin_tokens').select(ADMIN_TOKEN_COLUMNS);
    return (await page(query, request, 'id').execute()).map(toAdminToken);
  }

  async updateAdminToken(id: number, changes: { revokedAt?: number; lastUsedAt?: number }): Promise<void> {
    await this.db
      .updateTable('admin_tokens')
      .set({
        ...(changes.revokedAt !== undefined && { revoked_at: changes.revokedAt }),
        ...(changes.lastUsedAt !== undefined && { last_used_at: changes.lastUsedAt }),
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Tokens that can authenticate at `now`: neither revoked nor expired. With `lock` (inside a
   * transaction) PostgreSQL locks those rows until it ends, so two revocations running at once
   * cannot each see the other's token as the one left; SQLite runs one writer at a time anyway.
   */
  async countAdminTokens(now = Date.now(), options: { lock?: boolean } = {}): Promise<number> {
    let query = this.db
      .selectFrom('admin_tokens')
      .select('id')
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    if (options.lock && this.engine === 'postgres') query = query.forUpdate();
    return (await query.execute()).length;
  }

  // ---- audit -------------------------------------------------------------------------------

  async appendAudit(...entries: AuditEntry[]): Promise<void> {
    const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
    // Chunks keep each statement under both engines' limits on bound parameters.
    for (let start = 0; start < entries.length; start += 500) {
      await this.db
        .insertInto('audit_log')
        .values(
          entries.slice(start, start + 500).map((entry) => ({
            at: entry.at,
            actor: entry.actor,
            object_type: entry.objectType,
            object_id: entry.objectId,
            action: entry.action,
            reason: entry.reason,
            before: json(entry.before),
            after: json(entry.after),
          })),
        )
        .execute();
    }
  }

  async listAudit(
    filter: { objectType?: string; objectId?: string },
    request: PageRequest = {},
  ): Promise<AuditRecord[]> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (filter.objectType !== undefined) query = query.where('object_type', '=', filter.objectType);
    if (filter.objectId !== undefined) query = query.where('object_id', '=', filter.objectId);
    const rows = await page(query, request, 'id').execute();
    return rows.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor,
      objectType: row.object_type,
      objectId: row.object_id,
      action: row.action,
      reason: row.reason,
      before: row.before === null ? null : (JSON.parse(row.before) as unknown),
      after: row.after === null ? null : (JSON.parse(row.after) as unknown),
    }));
  }

  // ---- events ------------------------------------------------------------------------------

  /**
   * Stores a batch of events atomically: idempotent replays become duplicates, events whose key was
   * used for a different request are refused and left out (`BatchOutcome.refused`), the raw events and
   * their per-minute rollups are written together, and caps are applied to what counts (counters of
   * capped campaigns advance, a total cap completes the campaign, a daily cap holds it until the
   * next local midnight of its time zone). Resolves only once durable.
   */
  async insertEvents(events: readonly TrackedEvent[]): Promise<BatchOutcome> {
    const effects: BatchOutcome = { refused: [], completed: [], cappedForTheDay: [], stored: new Map() };
    if (events.length === 0) return effects;
    const count = ({ stored, refused }: SettledBatch): void => {
      effects.refused = refused;
      for (const { kind, verdict } of stored) {
        const key = `${kind}:${verdict}`;
        effects.stored.set(key, (effects.stored.get(key) ?? 0) + 1);
      }
    };
    // On PostgreSQL a batch without capped campaigns is one statement, which commits by itself.
    if (this.engine === 'postgres' && !this.db.isTransaction && !events.some((event) => event.mayHitCap)) {
      count(await storeBatchPostgres(this.db, events));
      return effects;
    }
    await this.transaction(async (tx) => {
      const settled =
        this.engine === 'sqlite'
          ? storeBatchSqlite(this.sqliteHandle(), events)
          : await storeBatchPostgres(tx.db, events);
      count(settled);
      await tx.applyCaps(settled.stored, effects);
    });
    return effects;
  }

  /** Deletes up to `limit` raw events older than `before` (retention); returns how many. */
  pruneEvents(before: number, limit: number): Promise<number> {
    return pruneEvents(this.db, before, limit);
  }

  /** Forgets up to `limit` idempotency keys past their 24-hour window; returns how many. */
  pruneIdempotencyKeys(now: number, limit: number): Promise<number> {
    return pruneIdempotencyKeys(this.db, now, limit);
  }

  private async applyCaps(events: readonly TrackedEvent[], effects: BatchOutcome): Promise<void> {
    const counted = events.filter((event) => event.verdict === 'counted' && event.mayHitCap);
    const ids = [...new Set(counted.map((event) => event.campaignId))];
    if (ids.length === 0) return;
    const capped = await this.db
      .selectFrom('campaigns')
      .select([
        'id',
        'status',
        'time_zone',
        'cap_impressions_total',
        'cap_clicks_total',
        'cap_impressions_daily',
        'cap_clicks_daily',
      ])
      .where('id', 'in', ids)
      .orderBy('id') // one lock order for concurrent batches
      .where((eb) =>
        eb.or([
          eb('cap_impressions_total', 'is not', null),
          eb('cap_clicks_total', 'is not', null),
          eb('cap_impressions_daily', 'is not', null),
          eb('cap_clicks_daily', 'is not', null),
        ]),
      )
      .execute();
    for (const campaign of capped) {
      const mine = counted.filter((event) => event.campaignId === campaign.id);
      const last = mine[mine.length - 1] as TrackedEvent;
      const day = localDate(last.occurredAt, campaign.time_zone);
      const impressions = mine.filter((event) => event.kind === 'impression').length;
      const clicks = mine.length - impressions;
      const [total, today] = await Promise.all(
        ['total', day].map((key) => this.bumpCounter(campaign.id, key, impressions, clicks)),
      );
      const reached = (count: number, cap: number | null) => cap !== null && count >= cap;
      const totalCaps = {
        ...NO_CAPS,
        impressionsTotal: campaign.cap_impressions_total,
        clicksTotal: campaign.cap_clicks_total,
      };
      if (campaign.status === 'running' && totalCapReached(totalCaps, total!)) {
        await this.db
          .updateTable('campaigns')
          .set({ status: 'completed', updated_at: last.occurredAt })
          .where('id', '=', campaign.id)
          .execute();
        await this.appendAudit({
          at: last.occurredAt,
          actor: 'system',
          objectType: 'campaign',
          objectId: String(campaign.id),
          action: 'complete',
          reason: 'total cap reached',
          before: { status: campaign.status },
          after: { status: 'completed' },
        });
        effects.completed.push(campaign.id);
      } else if (
        reached(today!.impressions, campaign.cap_impressions_daily) ||
        reached(today!.clicks, campaign.cap_clicks_daily)
      ) {
        const until = startOfNextLocalDay(last.occurredAt, campaign.time_zone);
        await this.db
          .updateTable('campaigns')
          .set({ capped_until: until })
          .where('id', '=', campaign.id)
          .execute();
        effects.cappedForTheDay.push(campaign.id);
      }
    }
  }

  /** Counted impressions and clicks of a campaign's whole flight, as its total caps see them. */
  async campaignTotals(campaignId: number): Promise<Totals> {
    const row = await this.db
      .selectFrom('campaign_counters')
      .select(['impressions', 'clicks'])
      .where('campaign_id', '=', campaignId)
      .where('day', '=', 'total')
      .executeTakeFirst();
    return { impressions: Number(row?.impressions ?? 0), clicks: Number(row?.clicks ?? 0) };
  }

  private async bumpCounter(campaignId: number, day: string, impressions: number, clicks: number) {
    return this.db
      .insertInto('campaign_counters')
      .values({ campaign_id: campaignId, day, impressions, clicks })
      .onConflict((oc) =>
        oc.columns(['campaign_id', 'day']).doUpdateSet((eb) => ({
          impressions: eb('campaign_counters.impressions', '+', impressions),
          clicks: eb('campaign_counters.clicks', '+', clicks),
        })),
      )
      .returning(['impressions', 'clicks'])
      .executeTakeFirstOrThrow();
  }

  async countEvents(filter: { kind?: EventKind; campaignId?: number } = {}): Promise<number> {
    let query = this.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n'));
    if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
    if (filter.campaignId !== undefined) query = query.where('campaign_id', '=', filter.campaignId);
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // ---- meta --------------------------------------------------------------------------------

  async getMeta(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db
      .insertInto('meta')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}
