import { generateApiKey } from '../domain/api-keys.js';
import { DomainError, invalid, notFound } from '../domain/errors.js';
import type { ApiKeyRecord, Partner, Store } from '../store/store.js';

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The only time the plaintext exists outside the partner's own configuration. */
  plaintext: string;
}

function checkName(name: string, what: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 100) throw invalid(`${what} name must be 1 to 100 characters`);
  return trimmed;
}

/** Partners (the publishers that call the delivery API) and their API keys. */
export class PartnerService {
  constructor(private readonly store: Store) {}

  async createPartner(name: string): Promise<Partner> {
    const checked = checkName(name, 'partner');
    if (await this.store.findPartner(checked)) {
      throw new DomainError('conflict', `partner "${checked}" already exists`);
    }
    return this.store.createPartner(checked);
  }

  listPartners(): Promise<Partner[]> {
    return this.store.listPartners();
  }

  /** Finds a partner by numeric id or by exact name. */
  async findPartner(ref: string | number): Promise<Partner> {
    const partner = await this.store.findPartner(
      typeof ref === 'number' || /^\d+$/.test(ref) ? Number(ref) : ref,
    );
    if (!partner) throw notFound(`partner ${JSON.stringify(String(ref))} not found`);
    return partner;
  }

  async createKey(partnerRef: string | number, label: string | null = null): Promise<CreatedKey> {
    const partner = await this.findPartner(partnerRef);
    const generated = generateApiKey();
    const key = await this.store.createApiKey({
      partnerId: partner.id,
      label,
      displayPrefix: generated.displayPrefix,
      digest: generated.digest,
    });
    return { key, plaintext: generated.plaintext };
  }

  async listKeys(partnerRef?: string | number): Promise<ApiKeyRecord[]> {
    const partnerId = partnerRef === undefined ? undefined : (await this.findPartner(partnerRef)).id;
    return this.store.listApiKeys(partnerId);
  }

  /** Revokes a key immediately; every instance refuses it with 401 within 2 s. */
  async revokeKey(id: number): Promise<ApiKeyRecord> {
    const key = await this.store.revokeApiKey(id);
    if (!key) throw notFound(`api key ${id} not found`);
    return key;
  }
}
