import type { Store, TrackedEvent } from '../../src/store/store.js';

/**
 * An event as the store takes it: a counted impression in the header banner with no location,
 * device, idempotency key or address, with `fields` (its campaign, partner, key and time) over it.
 */
export function trackedEvent(
  fields: Pick<TrackedEvent, 'campaignId' | 'partnerId' | 'apiKeyId' | 'occurredAt'> & Partial<TrackedEvent>,
): TrackedEvent {
  return {
    kind: 'impression',
    placement: 'header_banner',
    country: null,
    device: null,
    verdict: 'counted',
    reason: null,
    idempotencyKey: null,
    userAddress: null,
    mayHitCap: false,
    priced: false,
    ...fields,
  };
}

/**
 * A new partner named `name` with one key (its digest `digest`) in `store`: the two ids an event of
 * theirs carries, to spread into `trackedEvent`.
 */
export async function newPartnerKey(
  store: Store,
  name: string,
  digest: string,
): Promise<Pick<TrackedEvent, 'partnerId' | 'apiKeyId'>> {
  const partner = await store.createPartner(name);
  const key = await store.createApiKey({ partnerId: partner.id, label: null, displayPrefix: 'p', digest });
  return { partnerId: partner.id, apiKeyId: key.id };
}
