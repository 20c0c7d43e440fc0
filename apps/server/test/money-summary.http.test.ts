import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackedEvent } from '../src/store/store.js';
import { advertiserOf, campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/** The billing zone: New York, five hours behind UTC in winter. */
const ZONE = 'America/New_York';
/** 1 March 2026, 02:00 UTC: still 28 February in New York. */
const END_OF_FEBRUARY = Date.parse('2026-03-01T02:00:00Z');
const NOW = Date.parse('2026-03-10T12:00:00Z');

interface Figures {
  spendMicros: number;
  earningsMicros: number;
  marginMicros: number;
  marginBasisPoints: number | null;
}
interface Summary {
  month: string;
  from: string;
  totals: Figures;
  advertisers: Array<Figures & { id: number; name: string }>;
  partners: Array<Figures & { id: number; name: string }>;
  months: Array<Figures & { month: string }>;
}

/**
 * The operator's money by month of the billing zone (D18): revenue, partner earnings and margin,
 * in all, by advertiser and by partner, equal to the events' own cost and earnings summed; an
 * event late on the last local day of a month counts in that month, not the next UTC one.
 */
describe.each(ENGINES)('money summary on %s', (engine) => {
  let t: TestApp;
  let ids: number[];
  let advertisers: number[];
  let partners: number[];

  beforeAll(async () => {
    t = await createTestApp({ engine, clock: () => NOW, billingTimeZone: ZONE, currency: 'USD' });
    ids = [
      ...(await t.addCampaigns([campaign({ title: 'Boots' })], 'Northwind')),
      ...(await t.addCampaigns([campaign({ title: 'Tea' })], 'Harbour')),
    ];
    advertisers = [await advertiserOf(t.store, ids[0]), await advertiserOf(t.store, ids[1])];
    const since = Date.parse('2026-02-01T00:00:00Z');
    await setCampaignPrice(t.store, ids[0], { model: 'cpm', amountMicros: 2_500_001, since });
    await setCampaignPrice(t.store, ids[1], { model: 'cpc', amountMicros: 400_000, since });
    const sources = [
      await newPartnerKey(t.store, 'Gazette', 'gazette'),
      await newPartnerKey(t.store, 'Daily', 'daily'),
    ];
    partners = sources.map((source) => source.partnerId);
    for (const [i, basisPoints] of [7000, 5000].entries())
      await t.store.addRevenueShare(
        { partnerId: partners[i], basisPoints, effectiveFrom: since, actor: 'test' },
        since,
      );
    const events: TrackedEvent[] = [];
    for (let n = 0; n < 60; n++)
      events.push(
        trackedEvent({
          ...sources[n % 2],
          campaignId: ids[n % 3 === 0 ? 1 : 0],
          kind: n % 3 === 0 ? 'click' : 'impression',
          // Half late in February (New York), half in March.
          occurredAt: n < 30 ? END_OF_FEBRUARY + n * 60_000 : NOW - n * 60_000,
          priced: true,
        }),
      );
    await t.store.insertEvents(events);
  });
  afterAll(async () => t?.close());

  /** The events' cost and earnings in [from, to), summed by `column`. */
  const eventSums = async (column: 'partner_id' | 'campaign_id', from: number, to: number) => {
    const { rows } = await sql<{ id: number | string; spend: number | string; earnings: number | string }>`
      select ${sql.ref(column)} as id, sum(cost_micros) as spend, sum(earnings_micros) as earnings from events
      where occurred_at >= ${from} and occurred_at < ${to} group by ${sql.ref(column)}`.execute(t.store.db);
    return new Map(
      rows.map((row) => [Number(row.id), { spend: Number(row.spend), earnings: Number(row.earnings) }]),
    );
  };
  const summary = async (query = '', token?: string) => {
    const res = await t.admin('GET', `/money/summary${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Summary }).data;
  };
  const pick = ({ spendMicros, earningsMicros }: Figures) => ({
    spend: spendMicros,
    earnings: earningsMicros,
  });

  it('sums February in New York: revenue, earnings and margin by advertiser and partner', async () => {
    const [from, to] = [Date.parse('2026-02-01T05:00:00Z'), Date.parse('2026-03-01T05:00:00Z')];
    const february = await summary('?month=2026-02');
    expect(february.from).toBe('2026-02-01T05:00:00.000Z');
    const byPartner = await eventSums('partner_id', from, to);
    expect(new Map(february.partners.map((line) => [line.id, pick(line)]))).toEqual(byPartner);
    const byCampaign = await eventSums('campaign_id', from, to);
    expect(new Map(february.advertisers.map((line) => [line.id, pick(line)]))).toEqual(
      new Map(ids.map((id, i) => [advertisers[i], byCampaign.get(id)!])),
    );
    expect(february.partners.map((line) => line.name)).toEqual(['Gazette', 'Daily']);
    const spend = [...byPartner.values()].reduce((sum, { spend }) => sum + spend, 0);
    const earnings = [...byPartner.values()].reduce((sum, { earnings }) => sum + earnings, 0);
    expect(spend).toBeGreaterThan(0);
    expect(february.totals).toEqual({
      spendMicros: spend,
      earningsMicros: earnings,
      marginMicros: spend - earnings,
      marginBasisPoints: Number((BigInt(spend - earnings) * 10_000n) / BigInt(spend)),
    });
  });

  it('gives this month by default, and the months before it with their totals', async () => {
    const march = await summary();
    expect(march.month).toBe('2026-03');
    expect(march.months.map((month) => month.month).slice(0, 3)).toEqual(['2026-03', '2026-02', '2026-01']);
    expect(march.months).toHaveLength(12);
    expect(pick(march.months[0])).toEqual(pick(march.totals));
    expect(pick(march.months[1])).toEqual(pick((await summary('?month=2026-02')).totals));
    expect(march.months[2]).toEqual({
      month: '2026-01',
      spendMicros: 0,
      earningsMicros: 0,
      marginMicros: 0,
      marginBasisPoints: null,
    });
  });

  it('refuses a malformed month naming the field, and anyone but the operator', async () => {
    const bad = await t.admin('GET', '/money/summary?month=2026-13');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('month must be a month, YYYY-MM');
    for (const account of [`advertiser:${advertisers[0]}`, `partner:${partners[0]}`]) {
      const token = (await t.services.tokens.create({ label: account, account, role: 'admin' })).plaintext;
      const refused = await t.admin('GET', '/money/summary', undefined, token);
      expect(refused.statusCode, account).toBe(403);
      expect(refused.json().message).toBe('only the operator may read the money summary');
    }
  });
});
