import { describe, expect, it } from 'vitest';
import { isHttpUrl, isInFlight, validateCampaignInput } from './campaigns.js';

const base = { title: 'T', destinationUrl: 'https://a.example/', placements: ['header_banner'] };
const problems = (fields: Record<string, unknown>) =>
  validateCampaignInput({ ...base, ...fields }, 'c').problems.map((p) => `${p.field}: ${p.message}`);

describe('campaign input', () => {
  it('applies defaults and normalises targeting', () => {
    const { value } = validateCampaignInput(
      { ...base, countries: ['us', 'US', 'ca'], devices: ['Mobile'] },
      'c',
    );
    expect(value).toMatchObject({
      status: 'draft',
      priority: 0,
      weight: 1,
      description: null,
      category: null,
      countries: ['CA', 'US'],
      devices: ['mobile'],
      startAt: null,
      endAt: null,
    });
  });

  it('accepts any lower-case category word (an open set)', () => {
    expect(problems({ category: 'retail' })).toEqual([]);
    expect(problems({ category: 'Retail' })).toEqual([
      'c.category: must be a lower-case word such as "technology"',
    ]);
  });

  it.each(['javascript:alert(1)', 'ftp://a.example/', '/relative', 'https://', 'not a url'])(
    'rejects the destination %j',
    (url) =>
      expect(problems({ destinationUrl: url })).toEqual([
        'c.destinationUrl: is required: an absolute http or https URL',
      ]),
  );

  it('reports every problem with its path', () => {
    expect(
      problems({
        title: '',
        status: 'live',
        weight: 0,
        placements: [],
        countries: ['XX'],
        devices: ['tv'],
        startAt: '2030-02-01T00:00:00Z',
        endAt: '2030-01-01T00:00:00Z',
      }),
    ).toEqual([
      'c.title: is required: a string of 1 to 200 characters',
      'c.status: must be one of: draft, pending_review, rejected, scheduled, running, paused, completed, archived',
      'c.weight: must be an integer between 1 and 1000000',
      'c.placements: must name at least one placement',
      'c.countries: "XX" is not an ISO 3166-1 alpha-2 code',
      'c.devices: "tv" is not one of: mobile, desktop, tablet',
      'c.endAt: must be after startAt',
    ]);
  });

  it('knows http(s) URLs and flight windows', () => {
    expect(isHttpUrl('http://a.example/x?y=1')).toBe(true);
    expect(isInFlight({ startAt: 10, endAt: 20 }, 10)).toBe(true);
    expect(isInFlight({ startAt: 10, endAt: 20 }, 20)).toBe(false);
    expect(isInFlight({ startAt: null, endAt: null }, 0)).toBe(true);
  });
});
