import { sql, type CompiledQuery, type Insertable } from 'kysely';
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { RollupCompactionJob } from '../src/jobs/rollup-compaction-job.js';
import { COMPACTED_BEFORE, QUARTER_HOUR } from '../src/store/event-ledger.js';
import { byCampaign, rollupStatements, type RollupQuery } from '../src/store/report-queries.js';
import type { Database } from '../src/store/schema.js';
import { advertiserOf, campaign } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';
import { fill as fillTable, planOf as plan } from './helpers/plans.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Reports of weeks read `campaign_rollups` (the rollups summed by campaign and quarter hour) for the
 * quarter hours that have closed, and the per-minute rollups for the rest (migration 013).
 */
describe.each(ENGINES)('reports over campaign rollups on %s', (engine) => {
  const t = eachTestFrozenApp(engine, '2026-11-22T10:01:00Z');
  let first: number;
  let second: number;
  let advertiser: number;
  beforeEach(async () => {
    [first] = await t.addCampaigns([campaign()], 'First Advertiser');
    [second] = await t.addCampaigns([campaign({ placements: ['header_banner', 'sidebar_top'] })]);
    advertiser = await advertiserOf(t.store, first);
  });

  const track = async (kind: 'impression' | 'click', campaignId: number, at: string, key?: string) => {
    t.now = Date.parse(at);
    const body = { campaignId, placement: 'header_banner', location: 'US', device: 'mobile' };
    const res = await t.track(kind, body, key === undefined ? {} : { 'idempotency-key': key });
    expect(res.statusCode, res.body).toBe(200);
  };

  async function report(query: string) {
    const res = await t.admin('GET', `/reports?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: unknown }).data;
  }

  const compactedBefore = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('meta')
          .select('value')
          .where('key', '=', COMPACTED_BEFORE)
          .executeTakeFirstOrThrow()
      ).value,
    );

  /** `campaign_rollups` against the per-minute rollups summed anew, for every summed quarter hour. */
  async function recount() {
    const before = await compactedBefore();
    const summed = await t.store.db
      .selectFrom('campaign_rollups')
      .select(['campaign_id', 'slot', 'kind', 'verdict', 'count'])
      .orderBy(['campaign_id', 'slot', 'kind', 'verdict'])
      .execute();
    const minutes = await t.store.db
      .selectFrom('event_rollups_live')
      .select(['campaign_id', 'minute', 'kind', 'verdict', 'count'])
      .where('minute', '<', before)
      .execute();
    const sums = new Map<string, number>();
    for (const row of minutes) {
      const slot = Number(row.minute) - (Number(row.minute) % QUARTER_HOUR);
      const key = [Number(row.campaign_id), slot, row.kind, row.verdict].join(' ');
      sums.set(key, (sums.get(key) ?? 0) + Number(row.count));
    }
    const rows = (list: [string, number][]) => list.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    expect(
      rows(
        summed.map((row) => [
          [Number(row.campaign_id), Number(row.slot), row.kind, row.verdict].join(' '),
          Number(row.count),
        ]),
      ),
    ).toEqual(rows([...sums]));
    return summed.length;
  }

  it('answers the same reports once closed quarter hours are summed, and counts later events for them once', async () => {
    await track('impression', first, '2026-11-22T10:01:00Z', 'a');
    await track('impression', first, '2026-11-22T10:01:30Z', 'a'); // a replay: not billable
    await track('click', first, '2026-11-22T10:07:00Z');
    await track('impression', second, '2026-11-22T10:20:00Z');
    await track('impression', first, '2026-11-22T11:05:00Z');
    await track('impression', first, '2026-11-22T12:10:00Z');
    await track('impression', second, '2026-11-22T12:14:00Z');
    const queries = [
      'from=2026-11-22&to=2026-11-22',
      `from=2026-11-22&to=2026-11-22&advertiser=${advertiser}`,
      'from=2026-11-22&to=2026-11-22&groupBy=campaign,advertiser',
      `from=2026-11-22T10:07:00Z&to=2026-11-22T12:12:00Z&granularity=hour&campaign=${first}`,
      'from=2026-11-22&to=2026-11-22&granularity=hour&timeZone=Asia/Kathmandu',
      'from=2026-11-22&to=2026-11-22&groupBy=country',
      'from=2026-11-22T10:00:00Z&to=2026-11-22T13:00:00Z&granularity=minute',
    ];
    const reports = () => Promise.all(queries.map(report));
    const before = await reports();

    // At 12:31 the quarter hours up to 12:15 have closed (15 minutes of grace): 12:00 to 12:15 is
    // the last one summed, and 12:15 on is read per minute.
    t.now = Date.parse('2026-11-22T12:31:00Z');
    expect(await compactedBefore()).toBe(0);
    expect(await t.services.compaction.runOnce()).toBeGreaterThan(0);
    expect(await compactedBefore()).toBe(Date.parse('2026-11-22T12:15:00Z'));
    expect(await recount()).toBe(7);
    expect(await reports()).toEqual(before);
    expect(await t.services.compaction.runOnce()).toBe(0);

    // Past 12:45 at once, there being no rollups in between; then an event for 12:20, a quarter
    // hour already summed (as a late commit or demo traffic from the past would be), is added to
    // both tables, so it counts once in every report.
    const ahead = new RollupCompactionJob(t.store, pino({ level: 'silent' }), () =>
      Date.parse('2026-11-22T13:01:00Z'),
    );
    expect(await ahead.runOnce()).toBe(1);
    expect(await compactedBefore()).toBe(Date.parse('2026-11-22T12:45:00Z'));
    expect(await reports()).toEqual(before);
    await track('impression', first, '2026-11-22T12:20:00Z');
    expect(await recount()).toBe(8);
    const totals = async (query: string) => ((await report(query)) as { totals: unknown }).totals;
    expect(await totals(queries[1])).toMatchObject({ impressions: 4, clicks: 1, nonBillableImpressions: 1 });
    expect(await totals(queries[0])).toMatchObject({ impressions: 6, clicks: 1, nonBillableImpressions: 1 });
    expect(await totals(queries[6])).toEqual(await totals(queries[0]));
  });

  const planOf = (query: CompiledQuery) => plan(t.store.db, engine, query);
  const fill = <T extends 'event_rollups' | 'campaign_rollups'>(
    table: T,
    rows: ReadonlyArray<Insertable<Database[T]>>,
  ) => fillTable(t.store.db, engine, table, rows);

  /** 90 days of rollups of 100 campaigns (ids past the real ones: rollups have no foreign keys). */
  async function fillNinetyDays(end: number): Promise<void> {
    const minutes = Array.from({ length: 10_000 }, (_, i) => ({
      minute: end - (1 + i) * 13 * MINUTE,
      campaign_id: i % 100 === 0 ? first : 1_000 + (i % 100),
      partner_id: 1,
      placement_id: 'header_banner',
      country: 'US',
      device: 'mobile',
      kind: 'impression',
      verdict: 'counted',
      reason: '',
      count: 1,
    }));
    await fill('event_rollups', minutes);
    await fill(
      'campaign_rollups',
      minutes.map((row) => ({
        campaign_id: row.campaign_id,
        slot: row.minute - (row.minute % QUARTER_HOUR),
        kind: row.kind,
        verdict: row.verdict,
        count: row.count,
      })),
    );
    if (engine === 'postgres') await sql`analyze campaigns`.execute(t.store.db);
  }

  const PER_MINUTE_BY_CAMPAIGN =
    engine === 'sqlite'
      ? /SEARCH event_rollups USING INDEX event_rollups_campaign \(campaign_id=\? AND minute>\? AND minute<\?\)/
      : /event_rollups_campaign[^\n]*\n[^\n]*Index Cond: \(\(campaign_id = /;
  // The rows SQLite's batches appended and the fold has not summed yet (about a second's) are read
  // whole, as is the view's result: never the per-minute table itself.
  const NEVER_ALL_ROLLUPS =
    /"SCAN event_rollups"|Seq Scan on event_rollups\b|event_rollups_pk|autoindex_event_rollups/;

  it("reads an advertiser's 90 days by campaign, from both tables, never every campaign's rollups", async () => {
    const end = Date.parse('2026-11-22T00:00:00Z');
    await fillNinetyDays(end);
    const query: RollupQuery = {
      from: end - 90 * DAY,
      to: end + 10 * MINUTE,
      slotMs: QUARTER_HOUR,
      groupBy: [],
      // What an advertiser's people are scoped to (services/reports.ts).
      filters: { advertiser: [advertiser] },
    };
    const [summed, perMinute, ...rest] = rollupStatements(
      t.store.db,
      (await byCampaign(t.store.db, query))!,
      end - DAY,
    );
    expect(rest).toEqual([]);
    const summedPlan = await planOf(summed.compile());
    expect(summedPlan).toMatch(
      engine === 'sqlite'
        ? /SEARCH campaign_rollups USING PRIMARY KEY \(campaign_id=\? AND slot>\? AND slot<\?\)/
        : /campaign_rollups_pk[^\n]*\n[^\n]*Index Cond: \(\(campaign_id = /,
    );
    expect(summedPlan).not.toMatch(/"SCAN campaign_rollups|Seq Scan on campaign_rollups/);
    const perMinutePlan = await planOf(perMinute.compile());
    expect(perMinutePlan).toMatch(PER_MINUTE_BY_CAMPAIGN);
    expect(perMinutePlan).not.toMatch(NEVER_ALL_ROLLUPS);
  });

  it("reads a campaign's 24 hours by minute through the campaign index", async () => {
    const end = Date.parse('2026-11-22T00:00:00Z');
    await fillNinetyDays(end);
    const query: RollupQuery = {
      from: end - DAY,
      to: end,
      slotMs: MINUTE,
      groupBy: [],
      filters: { campaign: [first], advertiser: [advertiser] },
    };
    const statements = rollupStatements(t.store.db, (await byCampaign(t.store.db, query))!, end);
    expect(statements).toHaveLength(1);
    const plan = await planOf(statements[0].compile());
    expect(plan).toMatch(PER_MINUTE_BY_CAMPAIGN);
    expect(plan).not.toMatch(NEVER_ALL_ROLLUPS);
  });
});
