/**
 * A campaign with every field the operator's review queue shows (D14), as the management API and
 * the campaign service take it: its ad, category, placements, targeting, caps, pacing and a flight
 * on a wall clock other than UTC (07:00 UTC is 09:00 in Paris in July). The click-through URL is
 * long, so that a phone's screen must wrap it.
 */
export const WHOLE_CAMPAIGN = {
  title: 'Autumn walks',
  description: 'Boots for wet paths, 15% off this month.',
  category: 'lifestyle',
  destinationUrl: 'https://advertiser.example/boots?utm_source=placard&utm_campaign=autumn-walking-boots',
  placements: ['header_banner', 'sidebar_top'],
  countries: ['FR', 'BE'],
  devices: ['mobile'],
  timeZone: 'Europe/Paris',
  startAt: '2026-07-01T07:00:00Z',
  endAt: '2026-07-31T20:00:00Z',
  caps: { impressionsDaily: 500, clicksTotal: 40 },
  pacing: 'even',
};

/**
 * The dashboard's campaign form (new or edit) as a person sends it, filled in validly with
 * `fields` over it: tests give only the fields they are about.
 */
export function campaignForm(fields: Record<string, string> = {}): Record<string, string> {
  return {
    title: 'Form offer',
    destinationUrl: 'https://advertiser.example/landing',
    placements: 'header_banner',
    timeZone: 'UTC',
    ...fields,
  };
}
