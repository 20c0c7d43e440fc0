import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkNewPassword } from '../src/domain/passwords.js';
import { seedDemo } from '../src/services/demo.js';
import { seedDemoUsers } from '../src/services/demo-users.js';
import { Sessions } from '../src/services/sessions.js';
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
      .selectFrom('event_rollups')
      .select((eb) => eb.fn.sum<number>('count').as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rolled.n)).toBe(impressions + clicks);
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
    const signIns = await seedDemoUsers(store, tempDir('placard-demo-users-'));
    expect(signIns).toHaveLength(3);
    const sessions = new Sessions(store);
    for (const { email, password } of signIns ?? []) {
      expect(checkNewPassword(password, 'password', email)).toBe(password);
      expect((await sessions.signIn(email, password, '192.0.2.1')).ok).toBe(true);
    }
  });
});
