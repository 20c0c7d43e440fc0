import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Campaign, CampaignInput, CampaignStatus } from '../domain/campaigns.js';
import type { Device } from '../domain/targeting.js';
import type { Connection, Engine } from './connect.js';
import { migrateToLatest, pendingMigrations, type MigrationReport } from './migrate.js';
import type { CampaignTable, Database } from './schema.js';

export interface Placement {
  id: string;
  description: string;
  enabled: boolean;
}

export interface Partner {
  id: number;
  name: string;
  createdAt: number;
}

export type ApiKeyStatus = 'active' | 'suspended' | 'revoked';

export interface ApiKeyRecord {
  id: number;
  partnerId: number;
  label: string | null;
  displayPrefix: string;
  status: ApiKeyStatus;
  createdAt: number;
  revokedAt: number | null;
}

/** What the auth layer needs to know about a key, indexed by digest. */
export interface LiveKey {
  id: number;
  partnerId: number;
  digest: string;
  status: Exclude<ApiKeyStatus, 'revoked'>;
}

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
  verdict: string;
  reason: string | null;
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
}

export type CampaignPatch = Partial<CampaignInput>;

type Db = Kysely<Database> | Transaction<Database>;

function parseList<T extends string>(json: string): T[] {
  return JSON.parse(json) as T[];
}

function toCampaign(row: Selectable<CampaignTable>, placements: string[]): Campaign {
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
    countries: parseList(row.countries),
    devices: parseList<Device>(row.devices),
    startAt: row.start_at,
    endAt: row.end_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function campaignColumns(input: CampaignPatch): Updateable<CampaignTable> {
  const columns: Updateable<CampaignTable> = {};
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
  return columns;
}

/**
 * The storage API every service uses. One implementation over Kysely serves SQLite and PostgreSQL;
 * the contract test suite (`store.contract.test.ts`) runs against both.
 */
export class Store {
  readonly db: Kysely<Database>;
  readonly engine: Engine;
  readonly location: string;

  constructor(private readonly connection: Connection) {
    this.db = connection.db;
    this.engine = connection.engine;
    this.location = connection.location;
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

  // ---- advertisers and campaigns -----------------------------------------------------------

  /**
   * Imports advertisers (matched by name, created when new) and their campaigns in one transaction:
   * either everything is stored or nothing is.
   */
  async importCampaigns(advertisers: AdvertiserImport[], now = Date.now()): Promise<ImportSummary> {
    return this.db.transaction().execute(async (tx) => {
      const summary: ImportSummary = {
        advertisersCreated: 0,
        advertisersExisting: 0,
        campaignsCreated: 0,
        campaignIds: [],
      };
      for (const advertiser of advertisers) {
        const existing = await tx
          .selectFrom('advertisers')
          .select('id')
          .where('name', '=', advertiser.name)
          .executeTakeFirst();
        let advertiserId: number;
        if (existing) {
          advertiserId = existing.id;
          summary.advertisersExisting++;
        } else {
          const created = await tx
            .insertInto('advertisers')
            .values({ name: advertiser.name, created_at: now })
            .returning('id')
            .executeTakeFirstOrThrow();
          advertiserId = created.id;
          summary.advertisersCreated++;
        }
        for (const campaign of advertiser.campaigns) {
          summary.campaignIds.push(await this.insertCampaign(tx, advertiserId, campaign, now));
          summary.campaignsCreated++;
        }
      }
      return summary;
    });
  }

  private async insertCampaign(
    tx: Db,
    advertiserId: number,
    input: CampaignInput,
    now: number,
  ): Promise<number> {
    const { id } = await tx
      .insertInto('campaigns')
      .values({
        advertiser_id: advertiserId,
        title: input.title,
        description: input.description,
        category: input.category,
        destination_url: input.destinationUrl,
        status: input.status,
        priority: input.priority,
        weight: input.weight,
        countries: JSON.stringify(input.countries),
        devices: JSON.stringify(input.devices),
        start_at: input.startAt,
        end_at: input.endAt,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await tx
      .insertInto('campaign_placements')
      .values(input.placements.map((placement_id) => ({ campaign_id: id, placement_id })))
      .execute();
    return id;
  }

  async getCampaign(id: number): Promise<Campaign | undefined> {
    const [campaign] = await this.queryCampaigns(this.db, { id });
    return campaign;
  }

  async listCampaigns(filter: CampaignFilter = {}): Promise<Campaign[]> {
    return this.queryCampaigns(this.db, filter);
  }

  /**
   * Running campaigns with their placements, in pages ordered by id: the input of the serving index.
   * Paging keeps memory flat however many campaigns there are.
   */
  async *runningCampaignPages(pageSize = 5000): AsyncGenerator<Campaign[]> {
    let after = 0;
    for (;;) {
      const rows = await this.db
        .selectFrom('campaigns')
        .selectAll()
        .where('status', '=', 'running')
        .where('id', '>', after)
        .orderBy('id')
        .limit(pageSize)
        .execute();
      if (rows.length === 0) return;
      yield await this.withPlacements(this.db, rows);
      after = (rows[rows.length - 1] as { id: number }).id;
    }
  }

  async loadRunningCampaigns(): Promise<Campaign[]> {
    return this.queryCampaigns(this.db, { status: 'running' });
  }

  private async queryCampaigns(db: Db, filter: CampaignFilter & { id?: number }): Promise<Campaign[]> {
    let query = db.selectFrom('campaigns').selectAll('campaigns');
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
    return this.withPlacements(db, await query.orderBy('campaigns.id').execute());
  }

  /** Joins placements to campaign rows sorted by id, with one range query over their ids. */
  private async withPlacements(db: Db, rows: Selectable<CampaignTable>[]): Promise<Campaign[]> {
    if (rows.length === 0) return [];
    const first = (rows[0] as { id: number }).id;
    const last = (rows[rows.length - 1] as { id: number }).id;
    const links = await db
      .selectFrom('campaign_placements')
      .select(['campaign_id', 'placement_id'])
      .where('campaign_id', '>=', first)
      .where('campaign_id', '<=', last)
      .orderBy('placement_id')
      .execute();
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
    return this.db.transaction().execute(async (tx) => {
      const result = await tx
        .updateTable('campaigns')
        .set({ ...campaignColumns(patch), updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      if (patch.placements !== undefined) {
        await tx.deleteFrom('campaign_placements').where('campaign_id', '=', id).execute();
        await tx
          .insertInto('campaign_placements')
          .values(patch.placements.map((placement_id) => ({ campaign_id: id, placement_id })))
          .execute();
      }
      const [campaign] = await this.queryCampaigns(tx, { id });
      return campaign;
    });
  }

  // ---- partners and keys -------------------------------------------------------------------

  async createPartner(name: string, now = Date.now()): Promise<Partner> {
    const row = await this.db
      .insertInto('partners')
      .values({ name, created_at: now })
      .returning(['id', 'name', 'created_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, name: row.name, createdAt: row.created_at };
  }

  async findPartner(idOrName: number | string): Promise<Partner | undefined> {
    const row = await this.db
      .selectFrom('partners')
      .selectAll()
      .where(typeof idOrName === 'number' ? 'id' : 'name', '=', idOrName)
      .executeTakeFirst();
    return row && { id: row.id, name: row.name, createdAt: row.created_at };
  }

  async listPartners(): Promise<Partner[]> {
    const rows = await this.db.selectFrom('partners').selectAll().orderBy('id').execute();
    return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
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

  async listApiKeys(partnerId?: number): Promise<ApiKeyRecord[]> {
    let query = this.db.selectFrom('api_keys').selectAll();
    if (partnerId !== undefined) query = query.where('partner_id', '=', partnerId);
    return (await query.orderBy('id').execute()).map(toApiKey);
  }

  /** Marks a key revoked; returns it, or undefined when no such key exists. */
  async revokeApiKey(id: number, now = Date.now()): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .updateTable('api_keys')
      .set({ status: 'revoked', revoked_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toApiKey(row);
  }

  /** Keys that can authenticate (active or suspended), for the in-memory key registry. */
  async loadLiveKeys(): Promise<LiveKey[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'partner_id', 'digest', 'status'])
      .where('status', '!=', 'revoked')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      partnerId: row.partner_id,
      digest: row.digest,
      status: row.status as LiveKey['status'],
    }));
  }

  // ---- events ------------------------------------------------------------------------------

  /** Stores tracked events in one transaction; resolves only once the commit is durable. */
  async insertEvents(events: readonly TrackedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db
      .insertInto('events')
      .values(
        events.map((event) => ({
          kind: event.kind,
          campaign_id: event.campaignId,
          placement_id: event.placement,
          country: event.country,
          device: event.device,
          partner_id: event.partnerId,
          api_key_id: event.apiKeyId,
          occurred_at: event.occurredAt,
          verdict: event.verdict,
          reason: event.reason,
        })),
      )
      .execute();
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

function toApiKey(row: {
  id: number;
  partner_id: number;
  label: string | null;
  display_prefix: string;
  status: string;
  created_at: number;
  revoked_at: number | null;
}): ApiKeyRecord {
  return {
    id: row.id,
    partnerId: row.partner_id,
    label: row.label,
    displayPrefix: row.display_prefix,
    status: row.status as ApiKeyStatus,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
