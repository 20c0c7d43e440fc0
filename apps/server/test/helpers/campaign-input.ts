import { validateCampaignInput, type CampaignInput } from '../../src/domain/campaigns.js';

/**
 * A valid running campaign in the header banner, as the store takes it, with `fields` over it: for
 * tests that create campaigns in the store directly (without the HTTP API's checks around it).
 */
export function campaignInput(fields: Record<string, unknown> = {}): CampaignInput {
  const result = validateCampaignInput(
    {
      title: 'T',
      destinationUrl: 'https://a.example/',
      status: 'running',
      placements: ['header_banner'],
      ...fields,
    },
    'c',
  );
  if (!result.value) throw new Error(JSON.stringify(result.problems));
  return result.value;
}
