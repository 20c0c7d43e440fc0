import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { micros } from '../src/domain/money.js';
import { moneyFigure } from '../src/domain/money-rates.js';
import { QUARTER_HOUR } from '../src/store/event-ledger.js';
import { rollupStatements } from '../src/store/report-queries.js';
import type { TrackedEvent } from '../src/store/store.js';
import { advertiserOf, campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

const DAY_START = Date.parse('2026-06-01T00:00:00Z');
const HOUR = 60 * 60_000;
const NOW = DAY_START + 12 * HOUR;
/** Quarter hours before this are summed into `campaign_rollups` (the path of long reports). */
const COMPACTED_UNTIL = DAY_START + 6 * HOUR;
const RANGE = 'from=2026-06-01T00:00:00Z&to=2026-06-01T12:00:00Z';

interface Row {
  campaign?: number;
  partner?: number;
  spendMicros: number;
  earningsMicros?: number;
  marginMicros?: number;
}

/**
 * Partner earnings in reports (D18): each row and the totals carry what the events earned their
 * partners, the same on the per-minute and the campaign rollups, and each account reads only its
 * amounts: the operator spend, earnings and margin; a partner its spend and earnings; an advertiser
 * its spend, never what a partner earned.
 */
describe.each(ENGINES)('report earnings on %s', (engine) => {
  let t: TestApp;
  let ids: number[];
  let advertiser: number;
  let partners: number[];

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => NOW });
    ids = await t.addCampaigns(
      [campaign({ title: 'Per thousand' }), campaign({ title: 'Per click' })],
      'Shared',
    );
    advertiser = await advertiserOf(t.store, ids[0]);
    await setCampaignPrice(t.store, ids[0], { model: 'cpm', amountMicros: 2_500_001, since: DAY_START });
    await setCampaignPrice(t.store, ids[1], { model: 'cpc', amountMicros: 333_333, since: DAY_START });
    const sources = [
      await newPartnerKey(t.store, 'Seventy', 'seventy'),
      await newPartnerKey(t.store, 'Third', 'third'),
    ];
    partners = sources.map((source) => source.partnerId);
    for (const [i, basisPoints] of [7000, 3333].entries())
      await t.store.addRevenueShare(
        { partnerId: partners[i], basisPoints, effectiveFrom: DAY_START, actor: 'test' },
        DAY_START,
      );
    // Events every 7 minutes for 11 hours, spread over both campaigns and partners, some clicks
    // and some invalid (which earn nothing); the first hours are compacted below.
    const events: TrackedEvent[] = [];
    for (let minute = 0, n = 0; minute < 11 * 60; minute += 7, n++)
      events.push(
        trackedEvent({
          ...sources[n % 2],
          campaignId: ids[n % 3 === 0 ? 1 : 0],
          occurredAt: DAY_START + minute * 60_000,
          kind: n % 4 === 0 ? 'click' : 'impression',
          priced: true,
          ...(n % 9 === 0 && { verdict: 'invalid', reason: 'bot user agent' }),
        }),
      );
    await t.store.insertEvents(events);
    while ((await t.store.compactRollups(COMPACTED_UNTIL)) !== null);
  });
  afterAll(async () => t?.close());

  /** The events' own earnings and cost, summed by `column`. */
  const eventSums = async (column: 'campaign_id' | 'partner_id') => {
    const { rows } = await sql<{ id: number | string; earnings: number | string; spend: number | string }>`
      select ${sql.ref(column)} as id, sum(earnings_micros) as earnings, sum(cost_micros) as spend
      from events group by ${sql.ref(column)}`.execute(t.store.db);
    return new Map(
      rows.map((row) => [Number(row.id), { earnings: Number(row.earnings), spend: Number(row.spend) }]),
    );
  };
  const report = async (query: string, token?: string) => {
    const res = await t.admin('GET', `/reports?${RANGE}&${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: { rows: Row[]; totals: Row } }).data;
  };
  const summed = (rows: Row[], key: 'campaign' | 'partner') => {
    const sums = new Map<number, { earnings: number; spend: number }>();
    for (const row of rows) {
      const sum = sums.get(row[key]!) ?? { earnings: 0, spend: 0 };
      sums.set(row[key]!, {
        earnings: sum.earnings + row.earningsMicros!,
        spend: sum.spend + row.spendMicros,
      });
    }
    return sums;
  };
  const token = async (account: string) =>
    (await t.services.tokens.create({ label: account, account, role: 'reporter' })).plaintext;

  it('gives the operator each partner’s earnings and the margin, summing to the events’ earnings', async () => {
    const expected = await eventSums('partner_id');
    expect([...expected.values()].every(({ earnings }) => earnings > 0)).toBe(true);
    const data = await report('groupBy=partner&granularity=hour');
    expect(summed(data.rows, 'partner')).toEqual(expected);
    for (const row of data.rows) expect(row.marginMicros).toBe(row.spendMicros - row.earningsMicros!);
    const earnings = [...expected.values()].reduce((sum, { earnings }) => sum + earnings, 0);
    const spend = [...expected.values()].reduce((sum, { spend }) => sum + spend, 0);
    expect(data.totals).toMatchObject({
      spendMicros: spend,
      earningsMicros: earnings,
      marginMicros: spend - earnings,
    });
  });

  it('gives the same earnings from the campaign rollups as from the per-minute rollups', async () => {
    const query = {
      from: DAY_START,
      to: NOW,
      slotMs: QUARTER_HOUR,
      groupBy: ['campaign' as const],
      filters: { campaign: ids },
    };
    const tables = rollupStatements(t.store.db, query, COMPACTED_UNTIL).map((s) => s.compile().sql);
    expect(tables.some((text) => text.includes('campaign_rollups'))).toBe(true);
    const expected = await eventSums('campaign_id');
    // By hour: campaign_rollups up to the mark; by minute: the per-minute rollups throughout.
    const byHour = await report(`groupBy=campaign&granularity=hour&advertiser=${advertiser}`);
    const byMinute = await report(`groupBy=campaign&granularity=minute&advertiser=${advertiser}`);
    expect(summed(byHour.rows, 'campaign')).toEqual(expected);
    expect(summed(byMinute.rows, 'campaign')).toEqual(expected);
    expect(byHour.totals).toEqual(byMinute.totals);
  });

  it('never shows an advertiser what partners earned, in JSON or CSV', async () => {
    const own = await token(`advertiser:${advertiser}`);
    const data = await report('groupBy=campaign,partner', own);
    expect(data.rows.length).toBeGreaterThan(0);
    for (const counts of [...data.rows, data.totals]) {
      expect(counts).not.toHaveProperty('earningsMicros');
      expect(counts).not.toHaveProperty('marginMicros');
    }
    const csv = await t.admin('GET', `/reports?${RANGE}&groupBy=partner&format=csv`, undefined, own);
    expect(csv.body.split('\r\n')[0]).toBe(
      'period,partner,partnerName,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,currency',
    );
  });

  it('shows a partner its own earnings and spend, but not the margin', async () => {
    const own = await token(`partner:${partners[0]}`);
    const data = await report('groupBy=partner', own);
    expect(summed(data.rows, 'partner')).toEqual(
      new Map([[partners[0], (await eventSums('partner_id')).get(partners[0])!]]),
    );
    for (const counts of [...data.rows, data.totals]) expect(counts).not.toHaveProperty('marginMicros');
    const csv = await t.admin('GET', `/reports?${RANGE}&format=csv`, undefined, own);
    const [header, line] = csv.body.split('\r\n');
    expect(header).toBe(
      'period,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,currency',
    );
    const earnings = (await eventSums('partner_id')).get(partners[0])!.earnings;
    expect(line.split(',').at(-2)).toBe(moneyFigure(micros(earnings), 'USD'));
  });

  it('writes the operator’s CSV with earnings and margin in units', async () => {
    const csv = await t.admin('GET', `/reports?${RANGE}&format=csv`);
    const [header, line] = csv.body.split('\r\n');
    expect(header).toBe(
      'period,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency',
    );
    const { totals } = await report('');
    const cells = line.split(',');
    expect(cells.slice(-3, -1)).toEqual(
      [totals.earningsMicros!, totals.marginMicros!].map((amount) => moneyFigure(micros(amount), 'USD')),
    );
  });
});
