import pino from 'pino';
import { sql } from 'kysely';
import { micros } from '../src/domain/money.js';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { connect, openSqliteFile } from '../src/store/connect.js';
import { DEFAULT_POLICIES } from '../src/domain/rate-limits.js';
import { isDataError } from '../src/store/errors.js';
import { Store, type TrackedEvent } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';
import {
  createDatabase,
  eachBlockStore,
  ENGINES,
  POSTGRES_ADMIN_URL,
  type TestDatabase,
} from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { withFreshStore } from './helpers/fresh-store.js';

/** The same behaviour is required of every engine; each runs this whole suite. */
describe.each(ENGINES)('store contract on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  eachBlockStore(engine, (opened) => ({ database, store } = opened));

  /** A new partner and key, and events of theirs: `fields` over a counted impression. */
  async function eventMaker(digest: string) {
    const source = await newPartnerKey(store, `Partner ${digest}`, digest);
    return (fields: Partial<TrackedEvent> & { campaignId: number }): TrackedEvent =>
      trackedEvent({ ...source, occurredAt: Date.parse('2026-06-01T12:00:00Z'), ...fields });
  }

  it('seeds the 15 placements of D1, enabled', async () => {
    const placements = await store.listPlacements();
    expect(placements).toHaveLength(15);
    expect(placements.every((p) => p.enabled)).toBe(true);
    expect(placements.map((p) => p.id)).toContain('header_banner');
  });

  it('migrates idempotently and reports nothing pending', async () => {
    expect((await store.migrate()).applied).toEqual([]);
    expect(await store.pendingMigrations()).toEqual([]);
  });

  it('round-trips a campaign with every field', async () => {
    const start = Date.parse('2030-01-01T00:00:00.000Z');
    // Fields that come back as given; the others come back sorted, in milliseconds or filled in.
    const asGiven = {
      description: 'd',
      category: 'retail',
      priority: 7,
      weight: 3,
      devices: ['mobile'],
      pacing: 'even',
      schedule: { mon: [[9, 17]], sat: [[10, 14]] },
      price: { model: 'cpc', amountMicros: 350_000 },
      budget: { totalMicros: 500_000_000, dailyMicros: 50_000_000 },
      frequencyCaps: [{ impressions: 3, per: 'day' }],
    };
    const { campaignIds } = await store.importCampaigns(
      [
        {
          name: 'Round Trip',
          campaigns: [
            campaignInput({
              ...asGiven,
              placements: ['header_banner', 'article_inline'],
              countries: ['US', 'CA'],
              startAt: '2030-01-01T00:00:00Z',
              endAt: '2030-02-01T00:00:00Z',
              caps: { impressionsDaily: 100 },
            }),
          ],
        },
      ],
      1_700_000_000_123,
    );
    const campaign = await store.getCampaign(campaignIds[0]);
    expect(campaign).toEqual({
      id: campaignIds[0],
      advertiserId: expect.any(Number),
      title: 'T',
      ...asGiven,
      destinationUrl: 'https://a.example/',
      status: 'running',
      placements: ['article_inline', 'header_banner'],
      countries: ['CA', 'US'],
      startAt: start,
      endAt: Date.parse('2030-02-01T00:00:00.000Z'),
      timeZone: 'UTC',
      caps: { impressionsTotal: null, clicksTotal: null, impressionsDaily: 100, clicksDaily: null },
      cappedUntil: null,
      budgetHeldUntil: null,
      rejectionReason: null,
      createdAt: 1_700_000_000_123,
      updatedAt: 1_700_000_000_123,
    });
  });

  it('keeps every price of a campaign with the one in force, appending only when the price changes', async () => {
    const { campaignIds } = await store.importCampaigns(
      [{ name: 'Priced', campaigns: [campaignInput({ price: { model: 'cpm', amountMicros: 2_500_000 } })] }],
      1_000,
      'cli',
    );
    const id = campaignIds[0];
    const cpc = { model: 'cpc' as const, amountMicros: micros(350_000) };
    await store.updateCampaign(
      id,
      { price: { model: 'cpm', amountMicros: micros(2_500_000) } },
      2_000,
      'user:1',
    );
    await store.updateCampaign(id, { title: 'Renamed' }, 3_000, 'user:1');
    await store.updateCampaign(id, { price: cpc }, 4_000, 'admin:2');
    await store.updateCampaign(id, { price: null }, 5_000, 'system');
    expect((await store.getCampaign(id))?.price).toBeNull();
    expect(await store.campaignPrices(id)).toEqual([
      { since: 5_000, price: null, setBy: 'system', billedUnits: 0, spendMicros: 0 },
      { since: 4_000, price: cpc, setBy: 'admin:2', billedUnits: 0, spendMicros: 0 },
      {
        since: 1_000,
        price: { model: 'cpm', amountMicros: 2_500_000 },
        setBy: 'cli',
        billedUnits: 0,
        spendMicros: 0,
      },
    ]);
    // A house campaign starts with no price and no history.
    const house = await store.createCampaign((await store.getCampaign(id))!.advertiserId, campaignInput());
    expect(await store.campaignPrices(house)).toEqual([]);
  });

  it('imports all or nothing', async () => {
    const before = (await store.listCampaigns()).length;
    await expect(
      store.importCampaigns([
        {
          name: 'Atomic',
          campaigns: [campaignInput(), campaignInput({ placements: ['no_such_placement'] })],
        },
      ]),
    ).rejects.toThrow();
    expect((await store.listCampaigns()).length).toBe(before);
    expect(
      (await store.db.selectFrom('advertisers').select('name').where('name', '=', 'Atomic').execute()).length,
    ).toBe(0);
  });

  it('reuses an advertiser matched by name', async () => {
    const first = await store.importCampaigns([{ name: 'Same Name', campaigns: [campaignInput()] }]);
    const second = await store.importCampaigns([{ name: 'Same Name', campaigns: [campaignInput()] }]);
    expect(first.advertisersCreated).toBe(1);
    expect(second).toMatchObject({ advertisersCreated: 0, advertisersExisting: 1, campaignsCreated: 1 });
  });

  it('lists campaigns filtered by status, placement and advertiser', async () => {
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Filters',
        campaigns: [
          campaignInput({ status: 'paused', placements: ['interstitial'] }),
          campaignInput({ placements: ['interstitial'] }),
        ],
      },
    ]);
    const paused = await store.listCampaigns({ status: 'paused', placement: 'interstitial' });
    expect(paused.map((c) => c.id)).toEqual([campaignIds[0]]);
    const inInterstitial = await store.listCampaigns({ placement: 'interstitial' });
    expect(inInterstitial.map((c) => c.id)).toEqual(campaignIds);
    const advertiserId = (await store.getCampaign(campaignIds[0]))!.advertiserId;
    expect((await store.listCampaigns({ advertiserId })).map((c) => c.id)).toEqual(campaignIds);
    const running = await store.listCampaigns({ status: 'running' });
    expect(running.every((c) => c.status === 'running')).toBe(true);
    expect(running.map((c) => c.id)).toContain(campaignIds[1]);
    expect(running.find((c) => c.id === campaignIds[1])?.placements).toEqual(['interstitial']);
  });

  it('pages through running campaigns in id order with their placements', async () => {
    await store.importCampaigns([
      {
        name: 'Pages',
        campaigns: Array.from({ length: 7 }, (_, i) =>
          campaignInput({
            status: i === 3 ? 'paused' : 'running',
            placements: ['sidebar_top', 'footer_banner'],
          }),
        ),
      },
    ]);
    const pages: number[][] = [];
    const seen: number[] = [];
    for await (const page of store.runningCampaignPages(2)) {
      pages.push(page.map((c) => c.id));
      seen.push(...page.map((c) => c.id));
      for (const c of page) expect(c.placements.length).toBeGreaterThan(0);
    }
    expect(pages.every((page) => page.length <= 2)).toBe(true);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen).toEqual((await store.listCampaigns({ status: 'running' })).map((c) => c.id));
  });

  it('updates fields and placements, and reports a missing campaign', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Updates', campaigns: [campaignInput()] }]);
    const id = campaignIds[0];
    const updated = await store.updateCampaign(
      id,
      { title: 'New', placements: ['footer_banner'], countries: ['FR'] },
      42,
    );
    expect(updated).toMatchObject({
      title: 'New',
      placements: ['footer_banner'],
      countries: ['FR'],
      updatedAt: 42,
    });
    expect(await store.updateCampaign(987654, { title: 'x' })).toBeUndefined();
  });

  it('creates partners and keys, revokes keys and loads only live ones', async () => {
    const partner = await store.createPartner('Contract Partner');
    expect(await store.findPartner('Contract Partner')).toEqual(partner);
    expect(await store.findPartner(partner.id)).toEqual(partner);
    await expect(store.createPartner('Contract Partner')).rejects.toThrow();

    const a = await store.createApiKey({
      partnerId: partner.id,
      label: 'a',
      displayPrefix: 'plc_aaaaaa',
      digest: 'd-a',
    });
    const b = await store.createApiKey({
      partnerId: partner.id,
      label: null,
      displayPrefix: 'plc_bbbbbb',
      digest: 'd-b',
    });
    expect(a).toMatchObject({ partnerId: partner.id, status: 'active', revokedAt: null });
    await expect(
      store.createApiKey({ partnerId: partner.id, label: null, displayPrefix: 'plc_x', digest: 'd-a' }),
    ).rejects.toThrow();

    const revoked = await store.revokeApiKey(a.id, 99);
    expect(revoked).toMatchObject({ status: 'revoked', revokedAt: 99 });
    expect(await store.revokeApiKey(999999)).toBeUndefined();
    const live = (await store.loadLiveKeys()).filter((k) => k.partnerId === partner.id);
    expect(live).toEqual([
      {
        id: b.id,
        partnerId: partner.id,
        digest: 'd-b',
        status: 'active',
        expiresAt: null,
        blockedCategories: [],
        blockedAdvertisers: [],
        policies: DEFAULT_POLICIES,
      },
    ]);
    expect((await store.listApiKeys(partner.id)).map((k) => k.status)).toEqual(['revoked', 'active']);
  });

  it('bumps the change feed on every write to campaigns, placements and keys, including raw SQL', async () => {
    const v0 = await store.changeVersions();
    const { campaignIds } = await store.importCampaigns([{ name: 'Feed', campaigns: [campaignInput()] }]);
    const v1 = await store.changeVersions();
    expect(v1['campaigns']).toBeGreaterThan(v0['campaigns']);
    expect(v1['keys']).toBe(v0['keys']);

    await sql`update campaigns set title = 'by hand' where id = ${campaignIds[0]}`.execute(store.db);
    const v2 = await store.changeVersions();
    expect(v2['campaigns']).toBeGreaterThan(v1['campaigns']);

    await sql`update placements set description = 'x' where id = 'interstitial'`.execute(store.db);
    const v3 = await store.changeVersions();
    expect(v3['campaigns']).toBeGreaterThan(v2['campaigns']);

    const partner = await store.createPartner('Feed Partner');
    await sql`update api_keys set status = status where partner_id = ${partner.id}`.execute(store.db);
    const v4 = await store.changeVersions();
    expect(v4['keys']).toBeGreaterThan(v3['keys']);

    await store.insertEvents([]);
    expect(await store.changeVersions()).toEqual(v4);
  });

  it('logs the campaign of every row a statement writes to campaigns or their placements, one version each', async () => {
    const version = async () => (await store.changeVersions())['campaigns'];
    const sorted = (ids: readonly number[] | null) => [...(ids ?? [])].sort((a, b) => a - b);
    const v0 = await version();
    const placements = ['header_banner', 'interstitial'];
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Log',
        campaigns: [
          campaignInput({ placements }),
          campaignInput({ placements }),
          campaignInput({ placements }),
        ],
      },
    ]);
    const v1 = await version();
    const imported = await store.campaignChangesBetween(v0, v1);
    expect(imported).not.toBeNull();
    expect(new Set(imported)).toEqual(new Set(campaignIds));

    // One statement, three rows: three versions, one campaign each.
    await sql`update campaigns set title = 'by hand' where id in (${sql.join(campaignIds)})`.execute(
      store.db,
    );
    const v2 = await version();
    expect(v2 - v1).toBe(3);
    expect(sorted(await store.campaignChangesBetween(v1, v2))).toEqual(sorted(campaignIds));

    await sql`delete from campaign_placements where campaign_id in (${sql.join(campaignIds)})`.execute(
      store.db,
    );
    const v3 = await version();
    expect(v3 - v2).toBe(6);
    expect(sorted(await store.campaignChangesBetween(v2, v3))).toEqual(
      sorted(campaignIds.flatMap((id) => [id, id])),
    );

    // A statement that writes no row logs nothing.
    await sql`update campaigns set title = 'none' where id = -1`.execute(store.db);
    expect(await version()).toBe(v3);
  });

  it('stores events and counts them', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Events', campaigns: [campaignInput()] }]);
    const event = trackedEvent({
      ...(await newPartnerKey(store, 'Events Partner', 'd-events')),
      campaignId: campaignIds[0],
      country: 'US',
      device: 'mobile' as const,
      occurredAt: 1_800_000_000_000,
    });
    // The events are in the future: on PostgreSQL, their days need partitions (a no-op on SQLite).
    await store.ensureEventPartitions(event.occurredAt, 1);
    await store.insertEvents([
      { ...event, kind: 'impression' },
      { ...event, kind: 'impression' },
      { ...event, kind: 'click' },
    ]);
    expect(await store.countEvents({ campaignId: campaignIds[0] })).toBe(3);
    expect(await store.countEvents({ campaignId: campaignIds[0], kind: 'click' })).toBe(1);
    // An event for a campaign that does not exist is refused by a foreign key.
    const refused = await store.insertEvents([{ ...event, kind: 'click', campaignId: 987654 }]).then(
      () => undefined,
      (error: unknown) => error,
    );
    // ...and recognised as a data error, so group commit isolates it instead of failing its batch.
    expect(isDataError(refused)).toBe(true);
    expect(isDataError(new Error('connection refused'))).toBe(false);
  });

  it('settles idempotent replays in a batch, across batches, per key and after 24 hours', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Replays', campaigns: [campaignInput()] }]);
    const partner = await store.createPartner('Replays Partner');
    const [first, second] = await Promise.all(
      ['d-replay-1', 'd-replay-2'].map((digest) =>
        store.createApiKey({ partnerId: partner.id, label: null, displayPrefix: 'p', digest }),
      ),
    );
    const at = 1_800_000_000_000;
    await store.ensureEventPartitions(at + 24 * 60 * 60 * 1000, 1);
    const event = (apiKeyId: number, idempotencyKey: string | null, occurredAt = at): TrackedEvent =>
      trackedEvent({
        campaignId: campaignIds[0],
        partnerId: partner.id,
        apiKeyId,
        occurredAt,
        idempotencyKey,
      });
    const stored = async (batch: TrackedEvent[]) =>
      Object.fromEntries((await store.insertEvents(batch)).stored);

    // In one batch: the first use of a key counts, its repeats do not; the same key string under
    // another API key is a different key; events without a key always count.
    expect(
      await stored([
        event(first.id, 'k1'),
        event(first.id, 'k1'),
        event(second.id, 'k1'),
        event(first.id, null),
        event(first.id, null),
        event(first.id, 'k1'),
      ]),
    ).toEqual({ 'impression:counted': 4, 'impression:duplicate': 2 });
    // In a later batch, a live key is a replay; a new one counts.
    expect(await stored([event(first.id, 'k1', at + 1000), event(first.id, 'k2', at + 1000)])).toEqual({
      'impression:counted': 1,
      'impression:duplicate': 1,
    });
    // 24 hours after its first use, a key protects nothing: it counts again, once.
    const later = at + 24 * 60 * 60 * 1000;
    expect(await stored([event(first.id, 'k1', later), event(first.id, 'k1', later)])).toEqual({
      'impression:counted': 1,
      'impression:duplicate': 1,
    });

    // What was answered is what was stored: raw events and rollups agree.
    const rows = await store.db
      .selectFrom('events')
      .select(['verdict', 'reason', 'idempotency_key'])
      .where('campaign_id', '=', campaignIds[0])
      .orderBy('id')
      .execute();
    expect(rows.map((row) => `${row.verdict}:${row.idempotency_key ?? '-'}`)).toEqual([
      'counted:k1',
      'duplicate:k1',
      'counted:k1',
      'counted:-',
      'counted:-',
      'duplicate:k1',
      'duplicate:k1',
      'counted:k2',
      'counted:k1',
      'duplicate:k1',
    ]);
    expect(rows.filter((row) => row.verdict === 'duplicate').map((row) => row.reason)).toEqual(
      Array(4).fill('idempotent replay'),
    );
    const rollups = await store.db
      .selectFrom('event_rollups_live')
      .select(['verdict', (eb) => eb.fn.sum<number>('count').as('n')])
      .where('campaign_id', '=', campaignIds[0])
      .groupBy('verdict')
      .orderBy('verdict')
      .execute();
    expect(rollups.map((row) => `${row.verdict}:${Number(row.n)}`)).toEqual(['counted:6', 'duplicate:4']);
  });

  it('refuses an Idempotency-Key sent again with a different request, and stores nothing of it', async () => {
    const { campaignIds } = await store.importCampaigns([
      { name: 'Reuse', campaigns: [campaignInput(), campaignInput()] },
    ]);
    const [one, two] = campaignIds as [number, number];
    const event = await eventMaker('d-reuse');
    const at = Date.parse('2026-06-01T12:00:00Z');
    const keyed = (idempotencyKey: string, fields: Partial<TrackedEvent> = {}) =>
      event({ campaignId: one, idempotencyKey, ...fields });
    const outcome = async (batch: TrackedEvent[]) => {
      const { refused, stored } = await store.insertEvents(batch);
      return { refused, stored: Object.fromEntries(stored) };
    };

    // In one batch: the same request again is a replay; any other kind, campaign, placement,
    // country or device with the key is refused.
    expect(
      await outcome([
        keyed('a'),
        keyed('a'),
        keyed('a', { kind: 'click' }),
        keyed('a', { campaignId: two }),
        keyed('a', { placement: 'sidebar_top' }),
        keyed('a', { country: 'US' }),
        keyed('a', { device: 'mobile' }),
        keyed('b', { kind: 'click' }),
      ]),
    ).toEqual({
      refused: [2, 3, 4, 5, 6],
      stored: { 'impression:counted': 1, 'impression:duplicate': 1, 'click:counted': 1 },
    });
    // In a later batch, also when the different request comes first.
    const soon = at + 1000;
    expect(
      await outcome([
        keyed('a', { kind: 'click', occurredAt: soon }),
        keyed('a', { occurredAt: soon }),
        keyed('b', { occurredAt: soon }),
      ]),
    ).toEqual({ refused: [0, 2], stored: { 'impression:duplicate': 1 } });
    // 24 hours on, the key is free again and stands for its new request.
    const later = at + 24 * 60 * 60 * 1000;
    expect(
      await outcome([keyed('a', { kind: 'click', occurredAt: later }), keyed('a', { occurredAt: later })]),
    ).toEqual({ refused: [1], stored: { 'click:counted': 1 } });
    // A key claimed before fingerprints were kept matches any request until it expires.
    await store.db
      .insertInto('idempotency_keys')
      .values({ api_key_id: keyed('x').apiKeyId, key: 'old', created_at: at, fingerprint: null })
      .execute();
    expect(
      await outcome([keyed('old', { kind: 'click', occurredAt: soon }), keyed('old', { occurredAt: soon })]),
    ).toEqual({
      refused: [],
      stored: { 'click:duplicate': 1, 'impression:duplicate': 1 },
    });

    // Batches in flight together: one request claims the key, the same request again is a replay,
    // a different one is refused, whichever batch commits first.
    const racing = await Promise.all(
      (['impression', 'click', 'impression', 'click', 'impression', 'click'] as const).map((kind) =>
        store.insertEvents([keyed('race', { kind, occurredAt: soon })]),
      ),
    );
    const winner = racing.find((result) => [...result.stored.keys()].some((k) => k.endsWith(':counted')));
    const winningKind = [...winner!.stored.keys()][0].split(':')[0];
    expect(
      racing.map((result) => (result.refused.length > 0 ? 'refused' : [...result.stored.keys()][0])),
    ).toEqual(
      ['impression', 'click', 'impression', 'click', 'impression', 'click'].map((kind, index) =>
        racing[index] === winner ? `${kind}:counted` : kind === winningKind ? `${kind}:duplicate` : 'refused',
      ),
    );

    // Nothing refused was stored, as raw events or in the rollups.
    const stored = await store.db
      .selectFrom('events')
      .select(['kind', 'verdict'])
      .where('api_key_id', '=', keyed('x').apiKeyId)
      .execute();
    expect(stored).toHaveLength(3 + 1 + 1 + 2 + 3);
    const rolled = await store.db
      .selectFrom('event_rollups_live')
      .select((eb) => eb.fn.sum<number>('count').as('n'))
      .where('partner_id', '=', keyed('x').partnerId)
      .executeTakeFirstOrThrow();
    expect(Number(rolled.n)).toBe(stored.length);
  });

  it('appends and lists the audit log per object, in order', async () => {
    for (const action of ['create', 'update']) {
      await store.appendAudit({
        at: 1000,
        actor: 'cli',
        objectType: 'partner',
        objectId: '77',
        action,
        reason: action === 'update' ? 'renamed' : null,
        before: action === 'create' ? null : { name: 'a' },
        after: { name: 'b' },
      });
    }
    await store.appendAudit({
      at: 1,
      actor: 'cli',
      objectType: 'campaign',
      objectId: '77',
      action: 'create',
      reason: null,
      before: null,
      after: {},
    });
    const trail = await store.listAudit({ objectType: 'partner', objectId: '77' });
    expect(trail.map((e) => [e.action, e.reason, e.before, e.after])).toEqual([
      ['create', null, null, { name: 'b' }],
      ['update', 'renamed', { name: 'a' }, { name: 'b' }],
    ]);
    const firstPage = await store.listAudit({ objectId: '77' }, { limit: 1 });
    expect(await store.listAudit({ objectId: '77' }, { after: firstPage[0].id, limit: 10 })).toHaveLength(2);
    // Newest first, paging towards older entries.
    const newest = await store.listAudit({ objectId: '77' }, { limit: 2, newestFirst: true });
    expect(newest.map((e) => [e.objectType, e.action])).toEqual([
      ['campaign', 'create'],
      ['partner', 'update'],
    ]);
    const older = await store.listAudit({ objectId: '77' }, { after: newest[1].id, newestFirst: true });
    expect(older.map((e) => [e.objectType, e.action])).toEqual([['partner', 'create']]);
  });

  it('keeps admin tokens by digest and forgets none, counting only the active ones', async () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    const before = await store.countAdminTokens(now);
    const token = await store.createAdminToken(
      { digest: 'admin-digest', displayPrefix: 'pla_abcdef', label: 'ops', expiresAt: now + 1000 },
      now,
    );
    const record = {
      id: token.id,
      label: 'ops',
      displayPrefix: 'pla_abcdef',
      scope: 'operator',
      role: 'admin',
      createdAt: now,
      expiresAt: now + 1000,
      revokedAt: null,
      lastUsedAt: null,
    };
    expect(token).toEqual(record);
    expect(await store.findAdminToken('admin-digest')).toEqual(record);
    expect(await store.findAdminToken('other')).toBeUndefined();
    expect(await store.countAdminTokens(now)).toBe(before + 1);
    expect(await store.countAdminTokens(now + 1000)).toBe(before);

    await store.updateAdminToken(token.id, { lastUsedAt: now + 10 });
    await store.updateAdminToken(token.id, { revokedAt: now + 20 });
    const revoked = { ...record, lastUsedAt: now + 10, revokedAt: now + 20 };
    expect(await store.getAdminToken(token.id)).toEqual(revoked);
    expect(await store.findAdminToken('admin-digest')).toEqual(revoked);
    expect(await store.countAdminTokens(now)).toBe(before);
    expect((await store.listAdminTokens()).at(-1)).toEqual(revoked);
    expect(await store.listAdminTokens({ after: token.id, limit: 5 })).toEqual([]);
  });

  it('changes key lifecycle columns and records last use outside the change feed', async () => {
    const partner = await store.createPartner('Lifecycle Partner');
    await store.updatePartner(partner.id, { blockedCategories: ['politics'], blockedAdvertisers: [7, 9] });
    const key = await store.createApiKey({
      partnerId: partner.id,
      label: null,
      displayPrefix: 'p',
      digest: 'd-life',
    });
    const updated = await store.updateApiKey(key.id, {
      status: 'suspended',
      suspendedAt: 5,
      suspendedReason: 'fraud',
      expiresAt: 9,
      rateLimits: { fetchRate: 1, fetchBurst: 2, eventsRate: 3, eventsBurst: 4 },
    });
    expect(updated).toMatchObject({
      status: 'suspended',
      suspendedReason: 'fraud',
      expiresAt: 9,
      rateLimits: { fetchRate: 1, fetchBurst: 2, eventsRate: 3, eventsBurst: 4 },
    });
    expect((await store.loadLiveKeys()).find((k) => k.id === key.id)).toMatchObject({
      status: 'suspended',
      expiresAt: 9,
      blockedCategories: ['politics'],
      blockedAdvertisers: [7, 9],
    });
    const versions = await store.changeVersions();
    await store.recordKeyUsage(new Map([[key.id, 1234]]));
    await store.recordKeyUsage(new Map([[key.id, 5678]]));
    expect((await store.getApiKey(key.id))?.lastUsedAt).toBe(5678);
    expect(await store.getApiKey(key.id)).toMatchObject({ browserRequests: 0, lastBrowserRequestAt: null });
    // Refused browser requests add up; a flush without any keeps the last one seen.
    await store.recordKeyUsage(new Map([[key.id, 6000]]), new Map([[key.id, { count: 2, at: 6000 }]]));
    await store.recordKeyUsage(new Map([[key.id, 7000]]), new Map([[key.id, { count: 3, at: 7000 }]]));
    await store.recordKeyUsage(new Map([[key.id, 8000]]));
    expect(await store.getApiKey(key.id)).toMatchObject({
      lastUsedAt: 8000,
      browserRequests: 5,
      lastBrowserRequestAt: 7000,
    });
    expect(await store.changeVersions()).toEqual(versions);
  });

  it('counts events against caps: a total cap completes, a daily cap holds until local midnight', async () => {
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Caps',
        campaigns: [
          campaignInput({ caps: { impressionsTotal: 2 } }),
          campaignInput({ caps: { clicksDaily: 1 }, timeZone: 'America/New_York' }),
          campaignInput(),
        ],
      },
    ]);
    const [total, daily, free] = campaignIds as [number, number, number];
    const source = await newPartnerKey(store, 'Caps Partner', 'd-caps');
    const at = Date.parse('2026-06-01T12:00:00Z');
    const event = (campaignId: number, kind: 'impression' | 'click'): TrackedEvent =>
      trackedEvent({ ...source, kind, campaignId, occurredAt: at, mayHitCap: true });
    expect(await store.insertEvents([event(total, 'impression'), event(free, 'impression')])).toEqual({
      refused: [],
      replayed: [],
      pastCap: [],
      pastBudget: [],
      completed: [],
      cappedForTheDay: [],
      advertisersHeld: [],
      stored: new Map([['impression:counted', 2]]),
    });
    expect(await store.insertEvents([event(total, 'impression'), event(daily, 'click')])).toEqual({
      refused: [],
      replayed: [],
      pastCap: [],
      pastBudget: [],
      completed: [total],
      cappedForTheDay: [daily],
      advertisersHeld: [],
      stored: new Map([
        ['impression:counted', 1],
        ['click:counted', 1],
      ]),
    });
    expect((await store.getCampaign(total))?.status).toBe('completed');
    // Noon UTC is 08:00 in New York; the next New York midnight is 04:00 UTC the day after.
    expect((await store.getCampaign(daily))?.cappedUntil).toBe(Date.parse('2026-06-02T04:00:00Z'));
    expect((await store.listAudit({ objectType: 'campaign', objectId: String(total) })).at(-1)).toMatchObject(
      {
        actor: 'system',
        action: 'complete',
      },
    );
  });

  it('applies caps in a batch that mixes events of capped and uncapped campaigns', async () => {
    const { campaignIds } = await store.importCampaigns([
      { name: 'Mixed caps', campaigns: [campaignInput({ caps: { impressionsTotal: 1 } }), campaignInput()] },
    ]);
    const [capped, free] = campaignIds as [number, number];
    const event = await eventMaker('d-mixed-caps');
    // Only the capped campaign's event needs the cap counters, and one such event is enough for
    // the batch to take the path that applies them.
    const outcome = await store.insertEvents([
      event({ campaignId: free, mayHitCap: false }),
      event({ campaignId: capped, mayHitCap: true }),
    ]);
    expect(outcome.completed).toEqual([capped]);
    expect((await store.getCampaign(capped))?.status).toBe('completed');
  });

  it('stores concurrent batches that share idempotency keys and rollup rows without deadlocking', async () => {
    const { campaignIds } = await store.importCampaigns([
      { name: 'Lock order', campaigns: [campaignInput()] },
    ]);
    const event = await eventMaker('d-lock-order');
    const at = Date.parse('2026-06-01T12:00:00Z');
    // Forty requests, each with its own Idempotency-Key and rollup row (its minute and country);
    // every batch sends all of them, each batch in its own order. Concurrent batches lock the same
    // rows, so only one lock order for all keeps them waiting for each other instead of deadlocking.
    const requests = Array.from({ length: 40 }, (_, i) =>
      event({
        campaignId: campaignIds[0],
        occurredAt: at + i * 60_000,
        country: `C${i}`,
        idempotencyKey: `lock-${i}`,
      }),
    );
    const shuffled = (seed: number) =>
      requests
        .map((request, i) => ({ request, rank: (i * 7919 + seed * 104_729) % 40 }))
        .sort((a, b) => a.rank - b.rank)
        .map(({ request }) => request);
    // Rounds with the keys, whose locks come first, and rounds without, which contend on the
    // rollups alone.
    const rounds = [true, false, true, false];
    for (const [round, withKeys] of rounds.entries()) {
      await Promise.all(
        Array.from({ length: 8 }, (_, batch) =>
          store.insertEvents(
            shuffled(round * 8 + batch).map((request) =>
              withKeys ? request : { ...request, idempotencyKey: null },
            ),
          ),
        ),
      );
    }
    expect(await store.countEvents({ campaignId: campaignIds[0] })).toBe(rounds.length * 8 * 40);
    const counted = await store.db
      .selectFrom('event_rollups_live')
      .select((eb) => eb.fn.sum<number>('count').as('n'))
      .where('campaign_id', '=', campaignIds[0])
      .where('verdict', '=', 'counted')
      .executeTakeFirstOrThrow();
    // Each key counts once; requests without a key always count.
    expect(Number(counted.n)).toBe(40 + 2 * 8 * 40);
  });

  it('counts an event in the rollups from its commit, and a fold changes no sum (SQLite appends, then folds)', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Fold', campaigns: [campaignInput()] }]);
    const event = await eventMaker('d-fold');
    const at = Date.parse('2026-06-01T12:00:00Z');
    // Two minutes, two countries, a click: rows that share a key within a batch, across batches and
    // with what an earlier fold wrote.
    const batch = (round: number) =>
      Array.from({ length: 12 }, (_, i) =>
        event({
          campaignId: campaignIds[0],
          occurredAt: at + (i % 2) * 60_000 + round,
          country: i % 3 === 0 ? 'DE' : 'US',
          kind: i === 5 ? 'click' : 'impression',
        }),
      );
    const sums = async (table: 'event_rollups' | 'event_rollups_live') =>
      (
        await store.db
          .selectFrom(table)
          .select(['minute', 'country', 'kind', (eb) => eb.fn.sum<number>('count').as('n')])
          .where('campaign_id', '=', campaignIds[0])
          .groupBy(['minute', 'country', 'kind'])
          .orderBy(['minute', 'country', 'kind'])
          .execute()
      ).map((row) => `${Number(row.minute) - at} ${row.country} ${row.kind} ${Number(row.n)}`);
    const expected = (rounds: number) => [
      `0 DE impression ${2 * rounds}`,
      `0 US impression ${4 * rounds}`,
      `60000 DE impression ${2 * rounds}`,
      `60000 US click ${rounds}`,
      `60000 US impression ${3 * rounds}`,
    ];
    const appended = async () =>
      Number(
        (await sql<{ n: number }>`select count(*) as n from event_rollup_deltas`.execute(store.db)).rows[0]
          ?.n,
      );
    // What earlier tests left appended, folded first.
    await store.foldAppended();
    await store.insertEvents(batch(0));
    await store.insertEvents(batch(1));
    expect(await sums('event_rollups_live')).toEqual(expected(2));
    if (engine === 'sqlite') {
      // Until the fold, the per-minute table has none of it: each batch appended its rows (one per
      // key in the batch), and the fold summed them there and emptied the appended rows.
      expect(await sums('event_rollups')).toEqual([]);
      expect(await appended()).toBe(2 * 5);
      expect(await store.foldAppended()).toBeGreaterThanOrEqual(2 * 5);
      expect(await appended()).toBe(0);
    } else expect(await store.foldAppended()).toBe(0);
    expect(await sums('event_rollups')).toEqual(expected(2));
    expect(await sums('event_rollups_live')).toEqual(expected(2));
    // Appended rows whose keys are already in the per-minute table add to them, and a fold with
    // nothing appended changes nothing.
    await store.insertEvents(batch(2));
    expect(await sums('event_rollups_live')).toEqual(expected(3));
    await store.foldAppended();
    expect(await store.foldAppended()).toBe(0);
    expect(await sums('event_rollups')).toEqual(expected(3));
    expect(await sums('event_rollups_live')).toEqual(expected(3));
  });

  it('moves a campaign status only from the expected one, and finds campaigns due for the clock', async () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Clock',
        campaigns: [
          campaignInput({ status: 'scheduled', startAt: '2026-06-01T11:00:00Z' }),
          campaignInput({ status: 'scheduled', startAt: '2026-06-01T13:00:00Z' }),
          campaignInput({ status: 'running', endAt: '2026-06-01T12:00:00Z' }),
          campaignInput({ status: 'running', endAt: '2026-06-01T12:00:01Z' }),
        ],
      },
    ]);
    const due = (await store.campaignsDueForTimedStatus(now)).map((c) => c.id);
    expect(due).toEqual(expect.arrayContaining([campaignIds[0], campaignIds[2]]));
    expect(due).not.toContain(campaignIds[1]);
    expect(due).not.toContain(campaignIds[3]);
    expect(await store.moveCampaignStatus(campaignIds[0], 'scheduled', 'running', now)).toBe(true);
    expect(await store.moveCampaignStatus(campaignIds[0], 'scheduled', 'running', now)).toBe(false);
  });

  it('lists the advertisers with a campaign in the given statuses, by name, and keeps partners’ blocked advertisers', async () => {
    await store.importCampaigns([
      {
        name: 'Blocks Zeta',
        campaigns: [campaignInput({ status: 'draft' }), campaignInput({ status: 'paused' })],
      },
      { name: 'Blocks Alpha', campaigns: [campaignInput()] },
      { name: 'Blocks Draft', campaigns: [campaignInput({ status: 'draft' })] },
    ]);
    const found = (await store.advertisersWithCampaignsIn(['running', 'paused'])).filter((advertiser) =>
      advertiser.name.startsWith('Blocks '),
    );
    expect(found.map((advertiser) => advertiser.name)).toEqual(['Blocks Alpha', 'Blocks Zeta']);
    const partner = await store.createPartner('Blocking Partner');
    expect(partner.blockedAdvertisers).toEqual([]);
    await store.updatePartner(partner.id, { blockedAdvertisers: found.map((advertiser) => advertiser.id) });
    expect((await store.findPartner(partner.id))?.blockedAdvertisers).toEqual(
      found.map((advertiser) => advertiser.id),
    );
  });

  it('adds, describes and disables placements, and renames advertisers', async () => {
    await store.addPlacement({ id: 'contract_slot', description: 'd', enabled: true });
    await store.updatePlacement('contract_slot', { description: 'described', enabled: false });
    expect(await store.getPlacement('contract_slot')).toEqual({
      id: 'contract_slot',
      description: 'described',
      enabled: false,
    });
    const advertiser = await store.createAdvertiser('Rename Me');
    await store.renameAdvertiser(advertiser.id, 'Renamed', 42);
    expect(await store.findAdvertiser(advertiser.id)).toMatchObject({ name: 'Renamed', updatedAt: 42 });
    const page = await store.listAdvertisers({ limit: 2 });
    expect(page).toHaveLength(2);
    expect(
      (await store.listAdvertisers({ after: page[1].id, limit: 1000 })).every((a) => a.id > page[1].id),
    ).toBe(true);
  });

  it('counts the campaigns of the advertisers asked about', async () => {
    await store.importCampaigns([
      { name: 'Counted Twice', campaigns: [campaignInput(), campaignInput()] },
      { name: 'Counted Once', campaigns: [campaignInput()] },
    ]);
    const ids = await Promise.all(
      ['Counted Twice', 'Counted Once'].map(async (name) => (await store.findAdvertiser(name))!.id),
    );
    const empty = await store.createAdvertiser('Counted Never');
    const counts = await store.countCampaigns([...ids, empty.id]);
    expect(counts).toEqual(
      new Map([
        [ids[0], 2],
        [ids[1], 1],
      ]),
    );
    expect((await store.countCampaigns([])).size).toBe(0);
  });

  it('keeps meta values', async () => {
    expect(await store.getMeta('contract')).toBeUndefined();
    await store.setMeta('contract', 'one');
    await store.setMeta('contract', 'two');
    expect(await store.getMeta('contract')).toBe('two');
  });

  it('sees writes made through a second connection', async () => {
    const other = await database.open();
    try {
      await other.createPartner('From Elsewhere');
      expect(await store.findPartner('From Elsewhere')).toBeDefined();
    } finally {
      await other.close();
    }
  });
});

describe('SQLite connection settings', () => {
  it('puts every connection in WAL mode with synchronous=FULL, foreign keys on and a busy timeout', async () => {
    await withFreshStore('sqlite', async (store, database) => {
      // A second, independent connection to the same file must carry the same settings.
      const second = openSqliteFile(database.url.slice('sqlite:'.length));
      expect(second.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(second.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(second.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(second.pragma('busy_timeout', { simple: true })).toBe(5000);
      second.close();
      const viaKysely = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
      expect(viaKysely.rows[0]?.synchronous).toBe(2);
    });
  });
});

describe('PostgreSQL connection settings', () => {
  it('survives the server closing idle connections, and says so', async () => {
    const database = await createDatabase('postgres');
    const errors: Error[] = [];
    const store = new Store(connect(database.url, (error) => errors.push(error)));
    try {
      await store.migrate();
      await store.listPlacements();
      const name = new URL(database.url).pathname.slice(1);
      const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await admin.connect();
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      await admin.end();
      await eventually(() => errors.length > 0, 'the idle connection’s error reported');
      expect(errors[0]?.message).toMatch(/terminating connection/);
      // As the log writes it: the error alone, not the connection it came from.
      const logged = JSON.stringify(pino.stdSerializers.err(errors[0]));
      expect(logged).not.toMatch(/secretKey|password|client/i);
      expect(await store.listPlacements()).toHaveLength(15);
    } finally {
      await store.close();
      await database.drop();
    }
  });

  it('commits synchronously on every pooled connection', async () => {
    await withFreshStore('postgres', async (store) => {
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(store.db),
        ),
      );
      for (const result of results) expect(result.rows[0]?.synchronous_commit).toBe('on');
    });
  });
});
