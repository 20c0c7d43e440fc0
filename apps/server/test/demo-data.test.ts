import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestApiKey } from '../src/domain/api-keys.js';
import { checkNewPassword } from '../src/domain/passwords.js';
import { partnerAuthenticator } from '../src/http/auth.js';
import { DEMO_KEY_FILE, seedDemo } from '../src/services/demo.js';
import { seedDemoUsers } from '../src/services/demo-users.js';
import { Sessions } from '../src/services/sessions.js';
import { ServingState } from '../src/serving/serving-state.js';
import type { Store } from '../src/store/store.js';
import { createDatabase, ENGINES, tempDir, type TestDatabase } from './helpers/engines.js';

/** The demo data set `npm start` serves: campaigns, the demo partner's key and a week of its traffic. */
describe.each(ENGINES)('the demo data on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  const before = Date.now();

  beforeAll(async () => {
    database = await createDatabase(engine);
    store = await database.open();
    expect((await seedDemo(store, tempDir('placard-demo-'))).created).toBe(true);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  it('gives the demo partner a 70% share from before its first event, so its charged traffic earns', async () => {
    const partner = (await store.listPartners())[0];
    const shares = await store.listRevenueShares(partner.id);
    expect(shares.map((share) => share.basisPoints)).toEqual([7000]);
    const first = await store.db
      .selectFrom('events')
      .select((eb) => eb.fn.min<number>('occurred_at').as('first'))
      .executeTakeFirstOrThrow();
    expect(shares[0].effectiveFrom).toBeLessThanOrEqual(Number(first.first));
    expect(shares[0].effectiveFrom).toBeGreaterThan(before - 8 * 24 * 3_600_000);
    const audited = await store.listAudit(
      { objectType: 'partner', objectId: String(partner.id) },
      { limit: 10 },
    );
    expect(audited.map((entry) => entry.action)).toContain('set_revenue_share');
  });

  it('has a week of the demo partner’s traffic, to running campaigns only, in the rollups too', async () => {
    const events = await store.db
      .selectFrom('events')
      .innerJoin('campaigns', 'campaigns.id', 'events.campaign_id')
      .select((eb) => [
        'events.kind',
        'campaigns.status',
        eb.fn.countAll<number>().as('n'),
        eb.fn.min<number>('events.occurred_at').as('first'),
        eb.fn.max<number>('events.occurred_at').as('last'),
      ])
      .groupBy(['events.kind', 'campaigns.status'])
      .execute();
    expect(events.map((row) => [row.kind, row.status])).toEqual(
      expect.arrayContaining([
        ['impression', 'running'],
        ['click', 'running'],
      ]),
    );
    expect(events).toHaveLength(2);
    const [impressions, clicks] = ['impression', 'click'].map((kind) =>
      Number(events.find((row) => row.kind === kind)!.n),
    );
    expect(impressions).toBeGreaterThan(10_000);
    expect(clicks / impressions).toBeGreaterThan(0.005);
    expect(clicks / impressions).toBeLessThan(0.03);
    for (const row of events) {
      expect(Number(row.first)).toBeGreaterThanOrEqual(before - 7 * 24 * 3_600_000 - 3_600_000);
      expect(Number(row.last)).toBeLessThan(Date.now());
    }
    const rolled = await store.db
      .selectFrom('event_rollups_live')
      .select((eb) => eb.fn.sum<number>('count').as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rolled.n)).toBe(impressions + clicks);
  });

  it('prices most campaigns, keeps house campaigns without a price, and charges the priced ones’ traffic', async () => {
    const campaigns = await store.listCampaigns();
    const byModel = new Map<string, number>();
    for (const { price } of campaigns) {
      const model = price?.model ?? 'none';
      byModel.set(model, (byModel.get(model) ?? 0) + 1);
    }
    expect(byModel.get('none')).toBeGreaterThanOrEqual(1);
    expect(byModel.get('cpc')).toBeGreaterThanOrEqual(1);
    expect(byModel.get('cpm')! + byModel.get('cpc')!).toBeGreaterThan(campaigns.length / 2);
    expect(new Set(campaigns.flatMap(({ price }) => (price ? [price.amountMicros] : [])))).toEqual(
      new Set([2_500_000, 4_000_000, 350_000]),
    );
    // Each priced campaign's price is in its prices too, as the price change writes both.
    for (const campaign of campaigns.filter(({ price }) => price !== null)) {
      const [inForce] = await store.campaignPrices(campaign.id);
      expect(inForce?.price).toEqual(campaign.price);
    }
    // The week's traffic cost money: a running CPM campaign's spend is its CPM's share of its impressions.
    const cpm = campaigns.find(({ status, price }) => status === 'running' && price?.model === 'cpm')!;
    const [charged] = await store.campaignPrices(cpm.id);
    expect(charged.billedUnits).toBeGreaterThan(0);
    expect(charged.spendMicros).toBe(Math.floor((charged.billedUnits * cpm.price!.amountMicros) / 1000));
    const house = campaigns.find(({ status, price }) => status === 'running' && price === null)!;
    const costs = await store.db
      .selectFrom('events')
      .select((eb) => eb.fn.sum<number>('cost_micros').as('spend'))
      .where('campaign_id', '=', house.id)
      .executeTakeFirstOrThrow();
    expect(Number(costs.spend)).toBe(0);
  });

  it('is seeded once: a second start adds nothing', async () => {
    const count = async () =>
      Number(
        (
          await store.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const first = await count();
    expect((await seedDemo(store, tempDir('placard-demo-'))).created).toBe(false);
    expect(await count()).toBe(first);
  });
  it('gives the demo users passwords the password rule takes, and they sign in', async () => {
    const signIns = (await seedDemoUsers(store, tempDir('placard-demo-users-')))?.signIns;
    expect(signIns).toHaveLength(3);
    const sessions = new Sessions(store);
    for (const { email, password } of signIns ?? []) {
      expect(checkNewPassword(password, 'password', email)).toBe(password);
      expect((await sessions.signIn(email, password, '192.0.2.1')).ok).toBe(true);
    }
  });
});

/** Whether the partner API of a server on `store` would take `apiKey` (the authenticator it uses). */
async function partnerApiAccepts(store: Store, apiKey: string): Promise<boolean> {
  const state = new ServingState(store, { info: () => {}, error: () => {} }, 60_000);
  await state.load();
  try {
    partnerAuthenticator(state)(`Bearer ${apiKey}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * One data directory, two stores seeded in turn (`PLACARD_DATABASE_URL` set for one start, unset for
 * the next): the key and password files hold the second store's, so a start of the first must not
 * show them (its partner API would answer 401, its sign-in page refuse them), and the second's still
 * shows its own.
 */
describe.each(ENGINES)('two stores seeding the demo in one data directory, on %s', (engine) => {
  const databases: TestDatabase[] = [];
  const stores: Store[] = [];
  const dataDir = tempDir('placard-demo-shared-');

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      databases.push(await createDatabase(engine));
      stores.push(await databases[i].open());
      expect((await seedDemo(stores[i], dataDir)).created).toBe(true);
      expect((await seedDemoUsers(stores[i], dataDir))?.signIns).toHaveLength(3);
    }
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const database of databases) await database.drop();
  });

  it('show a store’s demo key only when that store’s partner API accepts it', async () => {
    const [first, second] = stores as [Store, Store];
    const inFile = fs.readFileSync(path.join(dataDir, DEMO_KEY_FILE), 'utf8').trim();
    expect(await partnerApiAccepts(first, inFile)).toBe(false); // what a start of the first used to show
    expect(await seedDemo(first, dataDir)).toMatchObject({ apiKey: undefined, keyProblem: 'unknown' });
    const fromSecond = await seedDemo(second, dataDir);
    expect(fromSecond).toMatchObject({ created: false, apiKey: inFile });
    expect(fromSecond.keyProblem).toBeUndefined();
    expect(await partnerApiAccepts(second, inFile)).toBe(true);
    // Suspended in its own store, the partner API refuses it there too (403), and it is not shown.
    const key = (await second.loadLiveKeys()).find((live) => live.digest === digestApiKey(inFile))!;
    await second.updateApiKey(key.id, { status: 'suspended' });
    expect(await partnerApiAccepts(second, inFile)).toBe(false);
    expect(await seedDemo(second, dataDir)).toMatchObject({ apiKey: undefined, keyProblem: 'unusable' });
    await second.updateApiKey(key.id, { status: 'active' });
  });

  it('show only the demo users’ passwords that sign in to that store', async () => {
    const [first, second] = stores as [Store, Store];
    const fromFirst = (await seedDemoUsers(first, dataDir))!;
    expect(fromFirst.signIns).toEqual([]);
    expect(fromFirst.withheld).toEqual([
      'operator@placard.example',
      'ads@northwind.example',
      'web@demo-publisher.example',
    ]);
    const fromSecond = (await seedDemoUsers(second, dataDir))!;
    expect(fromSecond.withheld).toEqual([]);
    expect(fromSecond.signIns).toHaveLength(3);
    const sessions = new Sessions(second);
    for (const { email, password } of fromSecond.signIns) {
      expect((await sessions.signIn(email, password, '192.0.2.1')).ok).toBe(true);
    }
  });
});
