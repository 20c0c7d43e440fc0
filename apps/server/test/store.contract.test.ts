import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCampaignInput, type CampaignInput } from '../src/domain/campaigns.js';
import { openSqliteFile } from '../src/store/connect.js';
import type { Store } from '../src/store/store.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';

function input(fields: Record<string, unknown> = {}): CampaignInput {
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

/** The same behaviour is required of every engine; each runs this whole suite. */
describe.each(ENGINES)('store contract on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await createDatabase(engine);
    store = await database.open();
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

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
    const { campaignIds } = await store.importCampaigns(
      [
        {
          name: 'Round Trip',
          campaigns: [
            input({
              description: 'd',
              category: 'retail',
              priority: 7,
              weight: 3,
              placements: ['header_banner', 'article_inline'],
              countries: ['US', 'CA'],
              devices: ['mobile'],
              startAt: '2030-01-01T00:00:00Z',
              endAt: '2030-02-01T00:00:00Z',
            }),
          ],
        },
      ],
      1_700_000_000_123,
    );
    const campaign = await store.getCampaign(campaignIds[0]!);
    expect(campaign).toEqual({
      id: campaignIds[0],
      advertiserId: expect.any(Number),
      title: 'T',
      description: 'd',
      category: 'retail',
      destinationUrl: 'https://a.example/',
      status: 'running',
      priority: 7,
      weight: 3,
      placements: ['article_inline', 'header_banner'],
      countries: ['CA', 'US'],
      devices: ['mobile'],
      startAt: start,
      endAt: Date.parse('2030-02-01T00:00:00.000Z'),
      timeZone: 'UTC',
      caps: { impressionsTotal: null, clicksTotal: null, impressionsDaily: null, clicksDaily: null },
      cappedUntil: null,
      rejectionReason: null,
      createdAt: 1_700_000_000_123,
      updatedAt: 1_700_000_000_123,
    });
  });

  it('imports all or nothing', async () => {
    const before = (await store.listCampaigns()).length;
    await expect(
      store.importCampaigns([
        { name: 'Atomic', campaigns: [input(), input({ placements: ['no_such_placement'] })] },
      ]),
    ).rejects.toThrow();
    expect((await store.listCampaigns()).length).toBe(before);
    expect(
      (await store.db.selectFrom('advertisers').select('name').where('name', '=', 'Atomic').execute()).length,
    ).toBe(0);
  });

  it('reuses an advertiser matched by name', async () => {
    const first = await store.importCampaigns([{ name: 'Same Name', campaigns: [input()] }]);
    const second = await store.importCampaigns([{ name: 'Same Name', campaigns: [input()] }]);
    expect(first.advertisersCreated).toBe(1);
    expect(second).toMatchObject({ advertisersCreated: 0, advertisersExisting: 1, campaignsCreated: 1 });
  });

  it('lists campaigns filtered by status, placement and advertiser', async () => {
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Filters',
        campaigns: [
          input({ status: 'paused', placements: ['interstitial'] }),
          input({ placements: ['interstitial'] }),
        ],
      },
    ]);
    const paused = await store.listCampaigns({ status: 'paused', placement: 'interstitial' });
    expect(paused.map((c) => c.id)).toEqual([campaignIds[0]]);
    const inInterstitial = await store.listCampaigns({ placement: 'interstitial' });
    expect(inInterstitial.map((c) => c.id)).toEqual(campaignIds);
    const advertiserId = (await store.getCampaign(campaignIds[0]!))!.advertiserId;
    expect((await store.listCampaigns({ advertiserId })).map((c) => c.id)).toEqual(campaignIds);
    const running = await store.loadRunningCampaigns();
    expect(running.every((c) => c.status === 'running')).toBe(true);
    expect(running.map((c) => c.id)).toContain(campaignIds[1]);
    expect(running.find((c) => c.id === campaignIds[1])?.placements).toEqual(['interstitial']);
  });

  it('pages through running campaigns in id order with their placements', async () => {
    await store.importCampaigns([
      {
        name: 'Pages',
        campaigns: Array.from({ length: 7 }, (_, i) =>
          input({ status: i === 3 ? 'paused' : 'running', placements: ['sidebar_top', 'footer_banner'] }),
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
    expect(seen).toEqual((await store.loadRunningCampaigns()).map((c) => c.id));
  });

  it('updates fields and placements, and reports a missing campaign', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Updates', campaigns: [input()] }]);
    const id = campaignIds[0]!;
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
      },
    ]);
    expect((await store.listApiKeys(partner.id)).map((k) => k.status)).toEqual(['revoked', 'active']);
  });

  it('bumps the change feed on every write to campaigns, placements and keys, including raw SQL', async () => {
    const v0 = await store.changeVersions();
    const { campaignIds } = await store.importCampaigns([{ name: 'Feed', campaigns: [input()] }]);
    const v1 = await store.changeVersions();
    expect(v1['campaigns']).toBeGreaterThan(v0['campaigns']!);
    expect(v1['keys']).toBe(v0['keys']);

    await sql`update campaigns set title = 'by hand' where id = ${campaignIds[0]}`.execute(store.db);
    const v2 = await store.changeVersions();
    expect(v2['campaigns']).toBeGreaterThan(v1['campaigns']!);

    await sql`update placements set description = 'x' where id = 'interstitial'`.execute(store.db);
    const v3 = await store.changeVersions();
    expect(v3['campaigns']).toBeGreaterThan(v2['campaigns']!);

    const partner = await store.createPartner('Feed Partner');
    await sql`update api_keys set status = status where partner_id = ${partner.id}`.execute(store.db);
    const v4 = await store.changeVersions();
    expect(v4['keys']).toBeGreaterThan(v3['keys']!);

    await store.insertEvents([]);
    expect(await store.changeVersions()).toEqual(v4);
  });

  it('stores events and counts them', async () => {
    const { campaignIds } = await store.importCampaigns([{ name: 'Events', campaigns: [input()] }]);
    const partner = await store.createPartner('Events Partner');
    const key = await store.createApiKey({
      partnerId: partner.id,
      label: null,
      displayPrefix: 'p',
      digest: 'd-events',
    });
    const event = {
      campaignId: campaignIds[0]!,
      placement: 'header_banner',
      country: 'US',
      device: 'mobile' as const,
      partnerId: partner.id,
      apiKeyId: key.id,
      occurredAt: 1_800_000_000_000,
      verdict: 'counted',
      reason: null,
    };
    await store.insertEvents([
      { ...event, kind: 'impression' },
      { ...event, kind: 'impression' },
      { ...event, kind: 'click' },
    ]);
    expect(await store.countEvents({ campaignId: campaignIds[0]! })).toBe(3);
    expect(await store.countEvents({ campaignId: campaignIds[0]!, kind: 'click' })).toBe(1);
    // An event for a campaign that does not exist is refused by a foreign key.
    await expect(store.insertEvents([{ ...event, kind: 'click', campaignId: 987654 }])).rejects.toThrow();
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
    const database = await createDatabase('sqlite');
    const store = await database.open();
    try {
      // A second, independent connection to the same file must carry the same settings.
      const second = openSqliteFile(database.url.slice('sqlite:'.length));
      expect(second.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(second.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(second.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(second.pragma('busy_timeout', { simple: true })).toBe(5000);
      second.close();
      const viaKysely = await sql<{ synchronous: number }>`pragma synchronous`.execute(store.db);
      expect(viaKysely.rows[0]?.synchronous).toBe(2);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

describe('PostgreSQL connection settings', () => {
  it('commits synchronously on every pooled connection', async () => {
    const database = await createDatabase('postgres');
    const store = await database.open();
    try {
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(store.db),
        ),
      );
      for (const result of results) expect(result.rows[0]?.synchronous_commit).toBe('on');
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
