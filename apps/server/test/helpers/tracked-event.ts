import type { TrackedEvent } from '../../src/store/store.js';

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
    ...fields,
  };
}
