import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, expectTracked, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { GroupCommitSink } from '../src/ingest/group-commit.js';
import type { Store, TrackedEvent } from '../src/store/store.js';

/**
 * A campaign's price through the management API (D18): the operator sets, changes and removes it,
 * every change is kept in the campaign's prices and named in the audit log, an advertiser reads it
 * but cannot set it unless the operator allows it (advertiser-pricing.http.test.ts), and a price set
 * through the API prices the next tracked impression.
 */
describe.each(ENGINES)('campaign prices through the management API, on %s', (engine) => {
  let t: TestApp;
  let advertiserId = 0;
  let running = 0;
  /** Every event the partner API handed to the store, as delivery marked it. */
  let handed: TrackedEvent[] = [];
  beforeEach(async () => {
    handed = [];
    t = await createTestApp({
      engine,
      events: (store: Store, onCap: () => void) =>
        new GroupCommitSink(
          {
            insertEvents: (events: readonly TrackedEvent[]) => {
              handed.push(...events);
              return store.insertEvents(events);
            },
          },
          () => undefined,
          onCap,
        ),
    });
    [running] = await t.addCampaigns([campaign({ title: 'Priced' })], 'Priced Ads');
    advertiserId = (await t.campaigns.get(running)).advertiserId;
  });
  afterEach(() => t.close());

  const cpm = (units: number) => ({ model: 'cpm', amountMicros: units * 1_000_000 });
  const history = async (id: number, token?: string) => {
    const answer = await t.admin('GET', `/campaigns/${id}/prices`, undefined, token);
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json().data as Array<Record<string, unknown>>;
  };
  const managerToken = async () =>
    (
      await t.services.tokens.create({
        label: 'advertiser manager',
        account: `advertiser:${advertiserId}`,
        role: 'manager',
      })
    ).plaintext;

  it('creates a campaign with a price, answers it with the currency, and keeps it in the prices', async () => {
    const created = await t.admin('POST', '/campaigns', {
      advertiserId,
      title: 'New',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
      price: { model: 'cpc', amountMicros: 350_000 },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    expect(created.json().data.price).toEqual({ model: 'cpc', amountMicros: 350_000, currency: 'USD' });
    expect((await t.admin('GET', `/campaigns/${id}`)).json().data.price).toEqual({
      model: 'cpc',
      amountMicros: 350_000,
      currency: 'USD',
    });
    expect(await history(id)).toEqual([
      {
        since: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        model: 'cpc',
        amountMicros: 350_000,
        currency: 'USD',
        setBy: expect.stringMatching(/^admin:\d+$/),
        billedUnits: 0,
        spendMicros: 0,
      },
    ]);
    // Without a price a campaign has none, and no history.
    const house = await t.admin('POST', '/campaigns', {
      advertiserId,
      title: 'House',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
    });
    expect(house.json().data.price).toBeNull();
    expect(await history(house.json().data.id)).toEqual([]);
  });

  it('appends to the prices on each change, not on a save that keeps the price, and audits both prices', async () => {
    expect((await t.admin('GET', `/campaigns/${running}`)).json().data.price).toBeNull();
    const set = await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(2.5) });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.price).toEqual({ ...cpm(2.5), currency: 'USD' });
    // A change to a price is not a change to what partners show: the campaign keeps running.
    expect(set.json().data.status).toBe('running');
    expect(await history(running)).toHaveLength(1);

    // Sending back the campaign as read (its price with the currency) changes nothing.
    const echoed = await t.admin('PATCH', `/campaigns/${running}`, {
      title: 'Priced, renamed',
      price: set.json().data.price,
    });
    expect(echoed.statusCode, echoed.body).toBe(200);
    expect(await history(running)).toHaveLength(1);

    expect((await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(4) })).statusCode).toBe(200);
    expect((await t.admin('PATCH', `/campaigns/${running}`, { price: null })).statusCode).toBe(200);
    const prices = await history(running);
    expect(prices.map((entry) => [entry['model'], entry['amountMicros']])).toEqual([
      [null, null],
      ['cpm', 4_000_000],
      ['cpm', 2_500_000],
    ]);
    expect((await t.admin('GET', `/campaigns/${running}`)).json().data.price).toBeNull();

    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${running}`)).json()
      .data as Array<{ action: string; before: { price: unknown }; after: { price: unknown } }>;
    const changes = trail
      .filter((entry) => entry.action === 'update')
      .map((entry) => [entry.before.price, entry.after.price]);
    expect(changes).toEqual(
      expect.arrayContaining([
        [null, cpm(2.5)],
        [cpm(2.5), cpm(4)],
        [cpm(4), null],
      ]),
    );
  });

  it('shows an advertiser its price and prices, and refuses its setting one with 403', async () => {
    await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(2.5) });
    const manager = await managerToken();
    const read = await t.admin('GET', `/campaigns/${running}`, undefined, manager);
    expect(read.json().data.price).toEqual({ ...cpm(2.5), currency: 'USD' });
    expect(await history(running, manager)).toHaveLength(1);

    for (const price of [cpm(0.5), null]) {
      const refused = await t.admin('PATCH', `/campaigns/${running}`, { price }, manager);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().message).toBe(
        `only the operator may set a campaign's price: the operator has not allowed advertiser "Priced Ads" to set its campaigns' prices`,
      );
    }
    const created = await t.admin(
      'POST',
      '/campaigns',
      { ...campaign({ price: cpm(1) }), status: undefined, advertiserId },
      manager,
    );
    expect(created.statusCode, created.body).toBe(403);
    expect(created.json().message).toMatch(/^only the operator may set a campaign's price: /);
    // The price it already has is no change: the advertiser's client may send back what it read.
    const echoed = await t.admin(
      'PATCH',
      `/campaigns/${running}`,
      { price: read.json().data.price },
      manager,
    );
    expect(echoed.statusCode, echoed.body).toBe(200);
    expect(await history(running)).toHaveLength(1);
    // Another advertiser's campaign's prices are not found, as the campaign is not.
    const [foreign] = await t.addCampaigns([campaign()], 'Foreign Ads');
    const hidden = await t.admin('GET', `/campaigns/${foreign}/prices`, undefined, manager);
    expect(hidden.statusCode).toBe(404);
  });

  it('refuses a malformed price naming the field, and changes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'cpm', amountMicros: 0 }, 'price.amountMicros'],
      [{ model: 'cpm', amountMicros: 2.5 }, 'price.amountMicros'],
      [{ model: 'cpm', amountMicros: '2500000' }, 'price.amountMicros'],
      [{ model: 'cpm', amountMicros: 9_000_000_000_000_001 }, 'price.amountMicros'],
      [{ model: 'cpa', amountMicros: 1_000 }, 'price.model'],
      [{ amountMicros: 1_000 }, 'price.model'],
      [{ model: 'cpm', amountMicros: 1_000, currency: 'EUR' }, 'price.currency'],
      [{ model: 'cpm', amountMicros: 1_000, discount: 5 }, 'price.discount'],
      ['2.50', 'price'],
    ];
    for (const [price, field] of cases) {
      const answer = await t.admin('PATCH', `/campaigns/${running}`, { price });
      expect([400, 422], `${JSON.stringify(price)}: ${answer.body}`).toContain(answer.statusCode);
      const named = [
        answer.json().field,
        ...(answer.json().problems ?? []).map((p: { field: string }) => p.field),
      ];
      expect(named, `${JSON.stringify(price)}: ${answer.body}`).toContain(field);
    }
    const currency = await t.admin('PATCH', `/campaigns/${running}`, {
      price: { model: 'cpm', amountMicros: 1_000, currency: 'EUR' },
    });
    expect(currency.json().problems[0].message).toContain('must be USD');
    expect(await history(running)).toEqual([]);
    expect((await t.campaigns.get(running)).price).toBeNull();
  });

  it('charges the next tracked impression the CPM’s share of a price set through the API', async () => {
    const impression = () => t.track('impression', { campaignId: running, placement: 'header_banner' });
    expectTracked(await impression(), 'impression');
    // 2.50 per thousand: the first impression costs floor(2,500,000 / 1,000) micros.
    expect((await t.admin('PATCH', `/campaigns/${running}`, { price: cpm(2.5) })).statusCode).toBe(200);
    // Once the serving index has the change (at once on this instance, within 2 s on others), its
    // events are marked priced, which PostgreSQL's commit needs to settle their cost.
    await t.state.refresh();
    expectTracked(await impression(), 'impression');
    expectTracked(await impression(), 'impression');
    const costs = await t.store.db
      .selectFrom('events')
      .select('cost_micros')
      .where('campaign_id', '=', running)
      .orderBy('id')
      .execute();
    expect(costs.map((row) => Number(row.cost_micros))).toEqual([0, 2_500, 2_500]);
    // Delivery marked them from the index: the store settles a marked batch at once, where an unmarked
    // one of a priced campaign is refused and taken again (PostgreSQL) or read in full (SQLite).
    expect(handed.map((event) => event.priced)).toEqual([false, true, true]);
    const [inForce] = await history(running);
    expect([inForce?.['billedUnits'], inForce?.['spendMicros']]).toEqual([2, 5_000]);
  });
});
