import {
  validateCampaignInput,
  type Campaign,
  type CampaignInput,
  type FieldProblem,
} from '../domain/campaigns.js';
import { DomainError, notFound } from '../domain/errors.js';
import type { AdvertiserImport, CampaignFilter, ImportSummary, Store } from '../store/store.js';

/** The JSON form of a campaign in an import file or an update (times as ISO 8601 strings). */
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
    createdAt: new Date(campaign.createdAt).toISOString(),
    updatedAt: new Date(campaign.updatedAt).toISOString(),
  };
}

function failed(problems: FieldProblem[], what: string): DomainError {
  const plural = problems.length === 1 ? 'problem' : 'problems';
  return new DomainError('unprocessable', `${what}: ${problems.length} ${plural}`, problems);
}

/** Advertisers' campaigns: bulk import, listing and editing. */
export class CampaignService {
  constructor(private readonly store: Store) {}

  private async knownPlacements(): Promise<Set<string>> {
    return new Set((await this.store.listPlacements()).map((p) => p.id));
  }

  /**
   * Validates a whole import document (`{"advertisers":[{"name":…,"campaigns":[…]}]}`) and stores it
   * all-or-nothing. Every problem is reported at once, with its path in the document.
   */
  async import(document: unknown): Promise<ImportSummary> {
    const problems: FieldProblem[] = [];
    const advertisers: AdvertiserImport[] = [];
    const list = (document as { advertisers?: unknown } | null)?.advertisers;
    if (!Array.isArray(list) || list.length === 0) {
      throw failed([{ path: 'advertisers', message: 'must be a non-empty array' }], 'invalid import file');
    }
    const known = await this.knownPlacements();
    list.forEach((raw: unknown, i) => {
      const path = `advertisers[${i}]`;
      const entry = raw as { name?: unknown; campaigns?: unknown } | null;
      const name = entry?.name;
      if (typeof name !== 'string' || name.trim() === '' || name.length > 100) {
        problems.push({ path: `${path}.name`, message: 'is required: a string of 1 to 100 characters' });
      }
      if (!Array.isArray(entry?.campaigns)) {
        problems.push({ path: `${path}.campaigns`, message: 'must be an array' });
        return;
      }
      const campaigns: CampaignInput[] = [];
      entry.campaigns.forEach((rawCampaign: unknown, j) => {
        const campaignPath = `${path}.campaigns[${j}]`;
        const result = validateCampaignInput(rawCampaign, campaignPath, known);
        problems.push(...result.problems);
        if (result.value) campaigns.push(result.value);
      });
      if (typeof name === 'string') advertisers.push({ name: name.trim(), campaigns });
    });
    if (problems.length > 0) throw failed(problems, 'invalid import file');
    return this.store.importCampaigns(advertisers);
  }

  list(filter: CampaignFilter = {}): Promise<Campaign[]> {
    return this.store.listCampaigns(filter);
  }

  async get(id: number): Promise<Campaign> {
    const campaign = await this.store.getCampaign(id);
    if (!campaign) throw notFound(`campaign ${id} not found`);
    return campaign;
  }

  /** Applies changed fields (in the import format) after validating the campaign as a whole. */
  async update(id: number, changes: Record<string, unknown>): Promise<Campaign> {
    const current = campaignToJson(await this.get(id));
    const result = validateCampaignInput(
      { ...current, ...changes },
      'campaign',
      await this.knownPlacements(),
    );
    if (!result.value) throw failed(result.problems, `invalid change to campaign ${id}`);
    const updated = await this.store.updateCampaign(id, result.value);
    if (!updated) throw notFound(`campaign ${id} not found`);
    return updated;
  }
}
