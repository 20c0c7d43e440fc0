import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackedEvent } from '../src/store/store.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const RANGE = 'from=2026-06-01T00:00:00Z&to=2026-06-01T12:00:00Z';

/**
 * The report API's money (D18) on a deployment counting in Bahraini dinars (three decimals): spend,
 * eCPM and eCPC in micros in JSON, floored to the micro, and in dinars with three decimals in CSV.
 */
describe.each(ENGINES)('report money on %s', (engine) => {
  let t: TestApp;
  let cpm: number;
  let cpc: number;
  let house: number;

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => NOW, currency: 'BHD' });
    [cpm, cpc, house] = await t.addCampaigns(
      [campaign({ title: 'Per thousand' }), campaign({ title: 'Per click' }), campaign({ title: 'House' })],
      'Money Ads',
    );
    const since = NOW - 60 * 60_000;
    await setCampaignPrice(t.store, cpm!, { model: 'cpm', amountMicros: 2_000_001, since });
    await setCampaignPrice(t.store, cpc!, { model: 'cpc', amountMicros: 1_234_567, since });
    const source = await newPartnerKey(t.store, 'Money partner', 'money');
    const event = (campaignId: number, fields: Partial<TrackedEvent> = {}) =>
      trackedEvent({ ...source, campaignId, occurredAt: NOW - 10 * 60_000, priced: true, ...fields });
    await t.store.insertEvents([
      // 3 impressions at a CPM of 2.000001: floor(3 × 2,000,001 / 1000) = 6,000 micros; the click is free.
      ...[1, 2, 3].map(() => event(cpm!)),
      event(cpm!, { kind: 'click' }),
      event(cpm!, { verdict: 'invalid', reason: 'bot user agent' }),
      // 2 impressions (free) and 2 clicks at 1.234567: 2,469,134 micros.
      event(cpc!),
      event(cpc!),
      event(cpc!, { kind: 'click' }),
      event(cpc!, { kind: 'click' }),
      event(cpc!, { kind: 'click', verdict: 'invalid', reason: 'bot user agent' }),
      // A campaign without a price: impressions, no clicks, no spend.
      event(house!),
    ]);
  });
  afterAll(async () => t?.close());

  it('gives each row and the totals their spend, eCPM and eCPC in micros, and the currency', async () => {
    const res = await t.admin('GET', `/reports?${RANGE}&groupBy=campaign`);
    expect(res.statusCode, res.body).toBe(200);
    const report = (res.json() as { data: { currency: string; rows: object[]; totals: object } }).data;
    expect(report.currency).toBe('BHD');
    const money = (row: object) => {
      const { spendMicros, ecpmMicros, ecpcMicros, currency } = row as Record<string, unknown>;
      return { spendMicros, ecpmMicros, ecpcMicros, currency };
    };
    expect(report.rows.map(money)).toEqual([
      // 6,000 × 1000 / 3 impressions; 6,000 / 1 click.
      { spendMicros: 6_000, ecpmMicros: 2_000_000, ecpcMicros: 6_000, currency: 'BHD' },
      { spendMicros: 2_469_134, ecpmMicros: 1_234_567_000, ecpcMicros: 1_234_567, currency: 'BHD' },
      { spendMicros: 0, ecpmMicros: 0, ecpcMicros: null, currency: 'BHD' },
    ]);
    // 2,475,134 over 6 impressions: 412,522,333.3 floored; over 3 clicks: 825,044.67 floored (a
    // float rounded would say 825,045).
    expect(money(report.totals)).toEqual({
      spendMicros: 2_475_134,
      ecpmMicros: 412_522_333,
      ecpcMicros: 825_044,
      currency: 'BHD',
    });
  });

  it('has no eCPM without impressions, and no spend for events that are not billable', async () => {
    const res = await t.admin('GET', `/reports?${RANGE}&verdict=invalid`);
    const { totals } = (res.json() as { data: { totals: Record<string, unknown> } }).data;
    expect(totals).toMatchObject({
      impressions: 0,
      clicks: 0,
      nonBillableImpressions: 1,
      nonBillableClicks: 1,
    });
    expect(totals).toMatchObject({ spendMicros: 0, ecpmMicros: null, ecpcMicros: null });
  });

  it('writes spend, eCPM and eCPC in CSV in dinars with three decimals, exactly from the micros', async () => {
    const res = await t.admin('GET', `/reports?${RANGE}&groupBy=campaign&format=csv`);
    expect(res.statusCode, res.body).toBe(200);
    const [header, ...lines] = res.body.split('\r\n');
    expect(header).toBe(
      'period,campaign,campaignName,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency',
    );
    // The partner has no revenue share: it earns nothing and the margin is the whole spend.
    const money = (line: string) => line.split(',').slice(-6);
    expect(lines.slice(0, -1).map(money)).toEqual([
      ['0.006', '2.000', '0.006', '0.000', '0.006', 'BHD'],
      ['2.469', '1234.567', '1.235', '0.000', '2.469', 'BHD'],
      ['0.000', '0.000', '', '0.000', '0.000', 'BHD'],
    ]);
    expect(lines.at(-1)).toBe('');
  });
});
