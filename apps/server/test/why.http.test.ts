import { afterEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const HOUR = 3_600_000;

interface Explanation {
  eligible: boolean;
  reasons: Array<{ code: string } & Record<string, unknown>>;
  chance: Record<string, number> | null;
}

// "Why isn't it serving?" (GET /admin/v1/campaigns/:id/why): one test per reason, on both engines.
describe.each(ENGINES)('why a campaign is not serving, on %s', (engine) => {
  let t: TestApp;
  let now: number;
  afterEach(() => t.close());

  async function start(campaigns: unknown[]): Promise<number[]> {
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
    return t.addCampaigns(campaigns);
  }
  /** The explanation's data for campaign `id` and the query string `query`. */
  async function why(id: number, query = ''): Promise<Explanation> {
    const response = await t.admin('GET', `/campaigns/${id}/why${query === '' ? '' : `?${query}`}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  }
  const codes = async (id: number, query = '') => (await why(id, query)).reasons.map((r) => r.code);

  it('names the status of a campaign that is not running, and nothing else', async () => {
    const [id] = await start([campaign({ status: 'paused', endAt: '2026-01-01T00:00:00Z' })]);
    const { eligible, reasons, chance } = await why(id, 'placement=article_inline');
    expect({ eligible, chance }).toEqual({ eligible: false, chance: null });
    expect(reasons).toEqual([
      expect.objectContaining({
        code: 'status',
        status: 'paused',
        message: expect.stringContaining('resume it'),
      }),
    ]);
  });

  it('names a flight that ended, with its end', async () => {
    const [id] = await start([campaign({ endAt: '2026-06-01T13:00:00Z' })]);
    now += 2 * HOUR;
    expect((await why(id)).reasons).toEqual([
      expect.objectContaining({ code: 'flight_ended', endAt: '2026-06-01T13:00:00.000Z' }),
    ]);
  });

  it('names a flight that has not started, with its start', async () => {
    const [id] = await start([campaign()]);
    await t.store.updateCampaign(id, { startAt: now + HOUR });
    expect((await why(id)).reasons).toEqual([
      expect.objectContaining({ code: 'flight_not_started', startAt: '2026-06-01T13:00:00.000Z' }),
    ]);
  });

  it('names a daily cap reached, with the end of its hold', async () => {
    const [id] = await start([campaign({ caps: { impressionsDaily: 1 } })]);
    expect((await t.track('impression', { campaignId: id, placement: 'header_banner' })).statusCode).toBe(
      200,
    );
    expect((await why(id)).reasons).toEqual([
      expect.objectContaining({ code: 'daily_cap_reached', cappedUntil: '2026-06-02T00:00:00.000Z' }),
    ]);
  });

  it('names placements all disabled, and the asked placement disabled', async () => {
    const [only, both] = await start([
      campaign({ placements: ['sidebar_top'] }),
      campaign({ placements: ['header_banner', 'sidebar_top'] }),
    ]);
    expect((await t.admin('PATCH', '/placements/sidebar_top', { enabled: false })).statusCode).toBe(200);
    expect((await why(only)).reasons).toEqual([
      expect.objectContaining({ code: 'placements_disabled', placements: ['sidebar_top'] }),
    ]);
    expect(await codes(both)).toEqual([]);
    expect(await codes(both, 'placement=sidebar_top')).toEqual(['placement_disabled']);
  });

  it('names a placement, a country and a device the campaign does not target, in that order', async () => {
    const [id] = await start([campaign({ countries: ['US', 'GB'], devices: ['mobile'] })]);
    expect((await why(id, 'placement=article_inline&location=fr&device=Desktop')).reasons).toEqual([
      expect.objectContaining({
        code: 'placement_not_targeted',
        placement: 'article_inline',
        placements: ['header_banner'],
      }),
      expect.objectContaining({ code: 'country_not_targeted', location: 'FR', countries: ['GB', 'US'] }),
      expect.objectContaining({ code: 'device_not_targeted', device: 'desktop', devices: ['mobile'] }),
    ]);
    expect(await codes(id, 'placement=header_banner&location=US&device=mobile')).toEqual([]);
  });

  it('names a category that the partner of the key blocks', async () => {
    const [id] = await start([campaign({ category: 'gambling' })]);
    expect(await codes(id, `key=${t.apiKeyId}`)).toEqual([]);
    const partner = (await t.store.getApiKey(t.apiKeyId))!.partnerId;
    await t.partners.updatePartner(partner, { blockedCategories: ['gambling'] });
    expect((await why(id, `placement=header_banner&key=${t.apiKeyId}`)).reasons).toEqual([
      expect.objectContaining({ code: 'category_blocked', category: 'gambling' }),
    ]);
  });

  it('names the advertiser that the partner of the key blocks, after a category it blocks', async () => {
    const [id] = await start([campaign({ category: 'gambling' })]);
    const advertiser = (await t.campaigns.get(id)).advertiserId;
    const partner = (await t.store.getApiKey(t.apiKeyId))!.partnerId;
    await t.partners.updatePartner(partner, { blockedAdvertisers: [advertiser] });
    expect((await why(id, `placement=header_banner&key=${t.apiKeyId}`)).reasons).toEqual([
      expect.objectContaining({
        code: 'advertiser_blocked',
        advertiserId: advertiser,
        advertiserName: 'Advertiser 1',
        message: 'The partner blocks its advertiser, Advertiser 1.',
      }),
    ]);
    await t.partners.updatePartner(partner, { blockedCategories: ['gambling'] });
    expect(await codes(id, `key=${t.apiKeyId}`)).toEqual(['category_blocked', 'advertiser_blocked']);
    // Without a key no partner's blocks apply.
    expect(await codes(id, 'placement=header_banner')).toEqual([]);
  });

  it('lists every reason that holds, in order: flight, cap, then the query', async () => {
    const [id] = await start([campaign({ endAt: '2026-06-01T13:00:00Z', countries: ['US'] })]);
    await t.store.updateCampaign(id, { cappedUntil: now + 3 * HOUR });
    now += 2 * HOUR;
    expect(await codes(id, 'placement=article_inline&location=DE')).toEqual([
      'flight_ended',
      'daily_cap_reached',
      'placement_not_targeted',
      'country_not_targeted',
    ]);
  });

  it('gives an eligible campaign its chance in the draw against the ones served now', async () => {
    const [light, heavy, first] = await start([
      campaign({ weight: 1 }),
      campaign({ weight: 3 }),
      campaign({ priority: 5 }),
    ]);
    const { eligible, reasons, chance } = await why(light, 'placement=header_banner&limit=1');
    expect({ eligible, reasons }).toEqual({ eligible: true, reasons: [] });
    // The priority-5 campaign always comes first: with one campaign a fetch, the light one never shows.
    expect(chance).toEqual({ limit: 1, ahead: 1, rivals: 1, weightShare: 0.25, inResponse: 0 });
    expect((await why(heavy, 'placement=header_banner')).chance).toMatchObject({
      weightShare: 0.75,
      inResponse: 1,
    });
    const drawn = (await why(light, 'placement=header_banner&limit=2')).chance?.['inResponse'];
    expect(drawn).toBeGreaterThan(0.15);
    expect(drawn).toBeLessThan(0.35);
    expect((await why(first, 'placement=header_banner&limit=1')).chance).toMatchObject({
      ahead: 0,
      inResponse: 1,
    });
  });

  it('refuses an unknown placement, a malformed location and a key it cannot see', async () => {
    const [id] = await start([campaign()]);
    const status = async (query: string) =>
      (await t.admin('GET', `/campaigns/${id}/why?${query}`)).statusCode;
    expect(await status('placement=nowhere')).toBe(400);
    expect(await status('location=XX')).toBe(400);
    expect(await status('device=watch')).toBe(400);
    expect(await status('key=999999')).toBe(404);
    expect(await status('limit=101')).toBe(400);
    expect((await t.admin('GET', '/campaigns/999999/why')).statusCode).toBe(404);
  });
});
