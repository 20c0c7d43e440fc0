import { CompiledQuery, type Insertable } from 'kysely';
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { RetentionJob } from '../src/jobs/retention-job.js';
import { pruneEventsQuery, pruneIdempotencyKeysQuery } from '../src/store/event-ledger.js';
import { DELETE_UNDER_MARK } from '../src/store/idempotency-marks-sqlite.js';
import { DEFAULT_GROUP_COMMIT, GroupCommitSink } from '../src/ingest/group-commit.js';
import type { Database } from '../src/store/schema.js';
import type { Store } from '../src/store/store.js';
import { advertiserOf, campaign, createTestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';
import { eventually } from './helpers/eventually.js';
import { trackedEvent } from './helpers/tracked-event.js';
import { fill as fillTable, planOf as plan } from './helpers/plans.js';

const DAY = 24 * 60 * 60 * 1000;

/** The money of a report row of campaigns without a price, with a click: nothing cost anything. */
/** The amounts of a row without prices, as the operator reads them: no spend, no earnings. */
const UNPRICED = {
  spendMicros: 0,
  ecpmMicros: 0,
  ecpcMicros: 0,
  earningsMicros: 0,
  marginMicros: 0,
  currency: 'USD',
};

describe.each(ENGINES)('events, idempotency and reports on %s', (engine) => {
  const t = eachTestFrozenApp(engine, '2026-11-22T23:58:00Z');
  let first: number;
  let second: number;
  beforeEach(async () => {
    [first] = await t.addCampaigns([campaign()], 'First Advertiser');
    [second] = await t.addCampaigns([campaign({ placements: ['header_banner', 'sidebar_top'] })]);
  });

  const impression = (campaignId: number, extra: Record<string, unknown> = {}, key?: string) =>
    t.track(
      'impression',
      { campaignId, placement: 'header_banner', ...extra },
      key === undefined ? {} : { 'idempotency-key': key },
    );

  const verdicts = async () =>
    (
      await t.store.db
        .selectFrom('events')
        .select(['verdict', 'reason', 'idempotency_key'])
        .orderBy('id')
        .execute()
    ).map((row) => `${row.verdict}:${row.reason ?? ''}:${row.idempotency_key ?? ''}`);

  /** A report through the management API; returns its data. */
  async function report(query: string) {
    const res = await t.admin('GET', `/reports?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: { rows: Record<string, unknown>[]; totals: Record<string, unknown> } })
      .data;
  }

  it('counts a retry with the same Idempotency-Key once and answers it 200 again', async () => {
    const a = await impression(first, {}, 'retry-1');
    const b = await impression(first, {}, 'retry-1');
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(b.body).toBe(a.body);
    expect(await verdicts()).toEqual(['counted::retry-1', 'duplicate:idempotent replay:retry-1']);
    const { totals } = await report('from=2026-11-22');
    expect(totals).toMatchObject({ impressions: 1, nonBillableImpressions: 1 });
  });

  it('counts concurrent requests with one Idempotency-Key once, while the first is in flight', async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => impression(first, {}, 'burst')));
    expect(responses.map((res) => res.statusCode)).toEqual(Array(12).fill(200));
    const stored = await verdicts();
    expect(stored.filter((v) => v.startsWith('counted'))).toHaveLength(1);
    expect(stored.filter((v) => v.startsWith('duplicate'))).toHaveLength(11);
  });

  const click = (campaignId: number, extra: Record<string, unknown> = {}, key?: string) =>
    t.track(
      'click',
      { campaignId, placement: 'header_banner', ...extra },
      key === undefined ? {} : { 'idempotency-key': key },
    );

  const REUSED = { status: 'error', message: 'Idempotency-Key was already used for a different request' };

  it('refuses with 422 an Idempotency-Key sent again with a different request, and stores nothing of it', async () => {
    const target = { location: 'US', device: 'mobile' };
    expect((await impression(first, { location: 'us', device: 'Mobile' }, 'reused')).statusCode).toBe(200);
    // The same request as normalised (country and device in any case) is a retry.
    expect((await impression(first, target, 'reused')).statusCode).toBe(200);
    const different = [
      await click(first, target, 'reused'),
      await impression(second, target, 'reused'),
      await impression(first, { device: 'mobile' }, 'reused'),
      await impression(first, { ...target, device: 'desktop' }, 'reused'),
    ];
    for (const res of different) {
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(REUSED);
    }
    expect(await verdicts()).toEqual(['counted::reused', 'duplicate:idempotent replay:reused']);
  });

  it('answers requests in flight with one Idempotency-Key: one counts, its repeats get 200, others 422', async () => {
    const kinds = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? 'impression' : 'click'));
    const responses = await Promise.all(
      kinds.map((kind) =>
        kind === 'impression' ? impression(first, {}, 'mixed') : click(first, {}, 'mixed'),
      ),
    );
    const stored = await t.store.db.selectFrom('events').select(['kind', 'verdict']).orderBy('id').execute();
    // Whichever request claims the key first is stored as itself: an impression is counted, and a
    // click is not billed, since no impression was stored before it (D15). Its repeats are duplicates.
    const claimed = stored.find((row) => row.verdict !== 'duplicate')!;
    expect(claimed.verdict).toBe(claimed.kind === 'impression' ? 'counted' : 'invalid');
    expect(responses.map((res) => res.statusCode)).toEqual(
      kinds.map((kind) => (kind === claimed.kind ? 200 : 422)),
    );
    expect(stored.map((row) => `${row.kind}:${row.verdict}`).sort()).toEqual(
      [`${claimed.kind}:${claimed.verdict}`, ...Array<string>(3).fill(`${claimed.kind}:duplicate`)].sort(),
    );
  });

  it('judges a click sharing a key with an impression still being stored only after it, never against it', async () => {
    // The impression's storing is held, so its click credit (D15) exists while the click arrives;
    // were the click judged then, it would be billed against an impression refused a moment later.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const kinds: string[] = [];
    const slow = await createTestApp({
      engine,
      clock: () => t.now,
      events: (store, onCap) =>
        new GroupCommitSink(
          {
            insertEvents: async (events: Parameters<Store['insertEvents']>[0]) => {
              kinds.push(...events.map((event) => event.kind));
              if (events.some((event) => event.kind === 'impression')) await held;
              return store.insertEvents(events);
            },
          },
          () => undefined,
          onCap,
          // Two batches at once, as on PostgreSQL: a click's batch could commit past a held one.
          { ...DEFAULT_GROUP_COMMIT, concurrency: 2 },
        ),
    });
    try {
      const [id] = await slow.addCampaigns([campaign()]);
      const body = { campaignId: id, placement: 'header_banner' };
      const shown = slow.track('impression', body, { 'idempotency-key': 'held' });
      await eventually(() => kinds.length > 0, 'the impression reaching the store');
      expect(kinds).toEqual(['impression']);
      const clicked = slow.track('click', body, { 'idempotency-key': 'held' });
      // The click waits for the impression: nothing of it reaches the store while the key is taken.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(kinds).toEqual(['impression']);
      release();
      expect((await shown).statusCode).toBe(200);
      expect((await clicked).statusCode).toBe(422);
      const stored = await slow.store.db.selectFrom('events').select(['kind', 'verdict']).execute();
      expect(stored).toEqual([{ kind: 'impression', verdict: 'counted' }]);
    } finally {
      release();
      await slow.close();
    }
  });

  it('scopes a key to its API key and forgets it after 24 hours', async () => {
    const partner = await t.partners.createPartner('Other Partner');
    const { plaintext } = await t.partners.createKey(partner.id);
    await t.state.refresh();
    expect((await impression(first, {}, 'shared')).statusCode).toBe(200);
    const other = await t.request({
      method: 'POST',
      url: '/api/v1/campaigns/impression',
      headers: {
        authorization: `Bearer ${plaintext}`,
        'content-type': 'application/json',
        'idempotency-key': 'shared',
      },
      payload: JSON.stringify({ campaignId: first, placement: 'header_banner' }),
    });
    expect(other.statusCode).toBe(200);
    t.now += DAY - 1;
    expect((await impression(first, {}, 'shared')).statusCode).toBe(200);
    t.now += 2;
    expect((await impression(first, {}, 'shared')).statusCode).toBe(200);
    expect((await verdicts()).map((v) => v.split(':')[0])).toEqual([
      'counted',
      'counted',
      'duplicate',
      'counted',
    ]);
  });

  it('remembers keys across a restart (they live in the store)', async () => {
    expect((await impression(first, {}, 'before-restart')).statusCode).toBe(200);
    const reopened = await t.database.open();
    try {
      const [event] = await t.store.db.selectFrom('events').selectAll().execute();
      await reopened.insertEvents([
        trackedEvent({
          campaignId: first,
          partnerId: Number(event.partner_id),
          apiKeyId: t.apiKeyId,
          occurredAt: t.now + 1000,
          idempotencyKey: 'before-restart',
        }),
      ]);
    } finally {
      await reopened.close();
    }
    expect(await verdicts()).toEqual([
      'counted::before-restart',
      'duplicate:idempotent replay:before-restart',
    ]);
  });

  it('refuses a malformed Idempotency-Key with 400 and stores nothing', async () => {
    for (const key of ['has space', 'x'.repeat(256), 'tab\there']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/campaigns/click',
        headers: {
          authorization: `Bearer ${t.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        payload: JSON.stringify({ campaignId: first, placement: 'header_banner' }),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        status: 'error',
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      });
    }
    expect((await impression(first, {}, 'x'.repeat(255))).statusCode).toBe(200);
    expect(await t.store.countEvents()).toBe(1);
  });

  describe('reports', () => {
    beforeEach(async () => {
      // 23:58 UTC on the 22nd: three impressions and a click of the first campaign in the US.
      for (let i = 0; i < 3; i++)
        expect((await impression(first, { location: 'US', device: 'mobile' })).statusCode).toBe(200);
      const click = await t.track('click', {
        campaignId: first,
        placement: 'header_banner',
        location: 'US',
        device: 'mobile',
      });
      expect(click.statusCode).toBe(200);
      // 00:02 UTC on the 23rd: two impressions of the second, one of them a replay.
      t.now = Date.parse('2026-11-23T00:02:00Z');
      expect((await impression(second, {}, 'r')).statusCode).toBe(200);
      expect((await impression(second, {}, 'r')).statusCode).toBe(200);
      expect((await impression(second)).statusCode).toBe(200);
    });

    it('groups by campaign per UTC day, with CTR and non-billable counts', async () => {
      const { rows, totals } = await report('from=2026-11-22&to=2026-11-23&groupBy=campaign');
      expect(rows).toEqual([
        {
          period: '2026-11-22',
          campaign: first,
          impressions: 3,
          clicks: 1,
          ctr: 0.333333,
          nonBillableImpressions: 0,
          nonBillableClicks: 0,
          impressionsWithViewer: 0,
          viewerShare: 0,
          ...UNPRICED,
        },
        {
          period: '2026-11-23',
          campaign: second,
          impressions: 2,
          clicks: 0,
          ctr: 0,
          nonBillableImpressions: 1,
          nonBillableClicks: 0,
          impressionsWithViewer: 0,
          viewerShare: 0,
          ...UNPRICED,
          ecpcMicros: null,
        },
      ]);
      expect(totals).toEqual({
        impressions: 5,
        clicks: 1,
        ctr: 0.2,
        nonBillableImpressions: 1,
        nonBillableClicks: 0,
        impressionsWithViewer: 0,
        viewerShare: 0,
        ...UNPRICED,
      });
    });

    it('puts the day boundary where the time zone says', async () => {
      const tokyo = await report('from=2026-11-23&to=2026-11-23&timeZone=Asia/Tokyo');
      expect(tokyo.rows).toEqual([
        {
          period: '2026-11-23',
          impressions: 5,
          clicks: 1,
          ctr: 0.2,
          nonBillableImpressions: 1,
          nonBillableClicks: 0,
          impressionsWithViewer: 0,
          viewerShare: 0,
          ...UNPRICED,
        },
      ]);
      const angeles = await report('from=2026-11-22&to=2026-11-22&timeZone=America/Los_Angeles');
      expect(angeles.rows.map((row) => [row['period'], row['impressions']])).toEqual([['2026-11-22', 5]]);
      // The UTC 22nd alone, asked for in Tokyo time, holds nothing of Tokyo's 22nd.
      expect((await report('from=2026-11-22&to=2026-11-22&timeZone=Asia/Tokyo')).rows).toEqual([]);
    });

    it('reports by hour and minute with the local offset', async () => {
      const kathmandu = await report(
        'from=2026-11-22T23:00:00Z&to=2026-11-23T01:00:00Z&granularity=hour&timeZone=Asia/Kathmandu',
      );
      // 23:58 and 00:02 UTC are 05:43 and 05:47 in Kathmandu (+05:45): one local hour.
      expect(kathmandu.rows.map((row) => [row['period'], row['impressions']])).toEqual([
        ['2026-11-23T05:00+05:45', 5],
      ]);
      const utc = await report('from=2026-11-22T23:00:00Z&to=2026-11-23T01:00:00Z&granularity=hour');
      expect(utc.rows.map((row) => [row['period'], row['impressions']])).toEqual([
        ['2026-11-22T23:00+00:00', 3],
        ['2026-11-23T00:00+00:00', 2],
      ]);
      const minutes = await report('from=2026-11-22T23:00:00Z&to=2026-11-23T01:00:00Z&granularity=minute');
      expect(minutes.rows.map((row) => [row['period'], row['impressions']])).toEqual([
        ['2026-11-22T23:58+00:00', 3],
        ['2026-11-23T00:02+00:00', 2],
      ]);
    });

    it('groups by advertiser, country and device, and filters', async () => {
      const grouped = await report('from=2026-11-22&to=2026-11-23&groupBy=advertiser,country,device');
      expect(
        grouped.rows.map((row) => [row['advertiser'], row['country'], row['device'], row['impressions']]),
      ).toEqual([
        [await advertiserOf(t.store, first), 'US', 'mobile', 3],
        [await advertiserOf(t.store, second), null, null, 2],
      ]);
      const filtered = await report(
        `from=2026-11-22&to=2026-11-23&device=mobile&partner=${(await t.store.db.selectFrom('api_keys').select('partner_id').where('id', '=', t.apiKeyId).executeTakeFirstOrThrow()).partner_id}`,
      );
      expect(filtered.totals).toMatchObject({ impressions: 3, clicks: 1 });
      const none = await report('from=2026-11-22&to=2026-11-23&country=none&groupBy=placement');
      expect(none.rows).toEqual([
        {
          period: '2026-11-23',
          placement: 'header_banner',
          impressions: 2,
          clicks: 0,
          ctr: 0,
          nonBillableImpressions: 1,
          nonBillableClicks: 0,
          impressionsWithViewer: 0,
          viewerShare: 0,
          ...UNPRICED,
          ecpcMicros: null,
        },
      ]);
    });

    it('answers CSV for format=csv and for Accept: text/csv', async () => {
      const expected =
        'period,campaign,campaignName,impressions,clicks,ctr,nonBillableImpressions,nonBillableClicks,impressionsWithViewer,viewerShare,spend,eCPM,eCPC,earnings,margin,currency\r\n' +
        `2026-11-22,${first},Test campaign,3,1,0.333333,0,0,0,0,0.00,0.00,0.00,0.00,0.00,USD\r\n` +
        `2026-11-23,${second},Test campaign,2,0,0,1,0,0,0,0.00,0.00,,0.00,0.00,USD\r\n`;
      const res = await t.admin('GET', '/reports?from=2026-11-22&to=2026-11-23&groupBy=campaign&format=csv');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.body).toBe(expected);
      const accepted = await t.request({
        method: 'GET',
        url: '/admin/v1/reports?from=2026-11-22&to=2026-11-23&groupBy=campaign',
        headers: { authorization: `Bearer ${t.adminToken}`, accept: 'text/csv' },
      });
      expect(accepted.body).toBe(expected);
    });

    it('keeps the rollups equal to a recount of the raw events', async () => {
      const rollups = await t.store.db
        .selectFrom('event_rollups_live')
        .select(['campaign_id', 'kind', 'verdict', (eb) => eb.fn.sum<number>('count').as('n')])
        .groupBy(['campaign_id', 'kind', 'verdict'])
        .orderBy(['campaign_id', 'kind', 'verdict'])
        .execute();
      const raw = await t.store.db
        .selectFrom('events')
        .select(['campaign_id', 'kind', 'verdict', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy(['campaign_id', 'kind', 'verdict'])
        .orderBy(['campaign_id', 'kind', 'verdict'])
        .execute();
      const norm = (rows: typeof raw) =>
        rows.map((row) => [Number(row.campaign_id), row.kind, row.verdict, Number(row.n)]);
      expect(norm(rollups)).toEqual(norm(raw));
      expect(norm(raw)).toHaveLength(4);
    });

    it('prunes raw events past the retention, keeps the rollups and so the reports', async () => {
      const before = await report('from=2026-11-22&to=2026-11-23&groupBy=campaign');
      let now = t.now + 60_000;
      const job = new RetentionJob(t.store, pino({ level: 'silent' }), 90, () => now);
      // A pass a minute later: nothing has expired (on SQLite it marks the keys stored so far).
      expect(await job.runOnce()).toMatchObject({ events: 0, idempotencyKeys: 0 });
      now = t.now + 90 * DAY - 60_000;
      const pruned = await job.runOnce();
      // 90 days after the second batch minus a minute: the first batch (4 events) is past retention.
      expect(pruned.events).toBe(4);
      expect(pruned.idempotencyKeys).toBe(1);
      expect(await t.store.countEvents()).toBe(3);
      expect(await report('from=2026-11-22&to=2026-11-23&groupBy=campaign')).toEqual(before);
    });

    const planOf = (query: CompiledQuery) => plan(t.store.db, engine, query);
    const fill = <T extends 'events' | 'idempotency_keys'>(
      table: T,
      rows: ReadonlyArray<Insertable<Database[T]>>,
    ) => fillTable(t.store.db, engine, table, rows);

    it('finds the events to prune through the occurred_at index, never by reading the whole table', async () => {
      expect((await impression(first)).statusCode).toBe(200);
      const owner = await t.store.db
        .selectFrom('events')
        .select(['partner_id', 'api_key_id'])
        .executeTakeFirstOrThrow();
      const rows = Array.from({ length: 5_000 }, (_, i) => ({
        ...owner,
        kind: 'impression',
        campaign_id: first,
        placement_id: 'header_banner',
        occurred_at: t.now - i * 1_000,
        verdict: 'counted',
      }));
      await fill('events', rows);

      const text = await planOf(pruneEventsQuery(t.store.db, t.now - 90 * DAY, 1_000).compile());
      // The old events are found by a range on the index, not by a filter over every row.
      expect(text).toContain(
        engine === 'sqlite' ? 'INDEX events_occurred (occurred_at<?)' : 'Index Cond: (occurred_at <',
      );
      expect(text).not.toMatch(/"SCAN events"|Seq Scan on events|Filter: \(occurred_at/);
    });

    it('finds the idempotency keys to forget by a range, never by reading the whole table, and deletes them by key', async () => {
      const rows = Array.from({ length: 5_000 }, (_, i) => ({
        api_key_id: t.apiKeyId,
        key: `key-${i}`,
        created_at: t.now - i * 1_000,
      }));
      await fill('idempotency_keys', rows);

      // PostgreSQL through the created_at index; SQLite, which has none, a range of rowids under a
      // mark (store/idempotency-marks-sqlite.ts).
      const text = await planOf(
        engine === 'sqlite'
          ? CompiledQuery.raw(DELETE_UNDER_MARK, [2_500, t.now - DAY, 1_000])
          : pruneIdempotencyKeysQuery(t.store.db, t.now, 1_000).compile(),
      );
      expect(text).toMatch(
        engine === 'sqlite'
          ? /SEARCH idempotency_keys USING INTEGER PRIMARY KEY \(rowid<\?\)/
          : /Index Cond: \(created_at <=/,
      );
      expect(text).not.toMatch(/"SCAN idempotency_keys"|Seq Scan on idempotency_keys|Filter: \(created_at/);
      // Each chosen pair is then found by its primary key (SQLite: its rowid).
      expect(text).toMatch(
        engine === 'sqlite'
          ? /SEARCH idempotency_keys USING INTEGER PRIMARY KEY \(rowid=\?\)/
          : /Index Scan using idempotency_keys_pk on idempotency_keys /,
      );
    });

    it('refuses bad parameters with 400 and anonymous callers with 401', async () => {
      const bad = await t.admin('GET', '/reports?timeZone=Nowhere/Land');
      expect(bad.statusCode).toBe(400);
      const timeZone = 'must be an IANA time zone such as "Europe/Paris"';
      expect(bad.json()).toEqual({
        status: 'error',
        code: 'invalid_request',
        message: `timeZone ${timeZone}`,
        problems: [{ field: 'timeZone', message: timeZone }],
      });
      expect((await t.admin('GET', '/reports?format=xml')).json()).toEqual({
        status: 'error',
        code: 'invalid_request',
        message: 'format must be json or csv',
        problems: [{ field: 'format', message: 'must be json or csv' }],
      });
      const anonymous = await t.request({ method: 'GET', url: '/admin/v1/reports' });
      expect(anonymous.statusCode).toBe(401);
    });
  });
});
