import { afterEach, describe, expect, it } from 'vitest';
import { digestApiKey } from '../src/domain/api-keys.js';
import { ServingState } from '../src/serving/serving-state.js';
import { advertiserOf, campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const QUIET = { info: () => {}, error: () => {} };

// Partners block advertisers as they block categories: through the management API (the operator,
// or the partner's own people), audited, and never served nor tracked for that partner.
describe.each(ENGINES)('partners’ blocked advertisers, on %s', (engine) => {
  let t: TestApp;
  afterEach(() => t.close());

  const partnerId = async () => (await t.partners.findPartner('Test Partner')).id;
  const served = async (key?: string) =>
    ((await t.fetch('placement=header_banner&limit=10', key)).json().data as Array<{ id: number }>)
      .map((c) => c.id)
      .sort((a, b) => a - b);

  it('creates, reads and changes them, audited; an id that names no advertiser is a 400 naming it', async () => {
    t = await createTestApp({ engine });
    const [id] = await t.addCampaigns([campaign()], 'Acme Ads');
    const advertiser = await advertiserOf(t.store, id);
    const created = await t.admin('POST', '/partners', { name: 'Quay', blockedAdvertisers: [advertiser] });
    expect(created.statusCode, created.body).toBe(201);
    const quay = created.json().data;
    expect(quay).toMatchObject({ blockedCategories: [], blockedAdvertisers: [advertiser] });
    expect((await t.admin('GET', `/partners/${quay.id}`)).json().data.blockedAdvertisers).toEqual([
      advertiser,
    ]);

    const unknown = await t.admin('PATCH', `/partners/${quay.id}`, {
      blockedAdvertisers: [advertiser, 999_999],
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({
      message: 'blockedAdvertisers names an unknown advertiser: 999999',
      problems: [{ field: 'blockedAdvertisers', message: 'names an unknown advertiser: 999999' }],
    });
    expect(
      (await t.admin('POST', '/partners', { name: 'Other', blockedAdvertisers: [999_998] })).statusCode,
    ).toBe(400);
    expect((await t.admin('PATCH', `/partners/${quay.id}`, { blockedAdvertisers: [0] })).statusCode).toBe(
      400,
    );
    expect((await t.admin('PATCH', `/partners/${quay.id}`, { blockedAdvertisers: 'all' })).statusCode).toBe(
      400,
    );

    const cleared = await t.admin('PATCH', `/partners/${quay.id}`, { blockedAdvertisers: [] });
    expect(cleared.json().data.blockedAdvertisers).toEqual([]);
    const trail = (await t.admin('GET', `/audit?objectType=partner&objectId=${quay.id}`)).json()
      .data as Array<{
      action: string;
      before: { blockedAdvertisers: number[] } | null;
      after: { blockedAdvertisers: number[] };
    }>;
    expect(
      trail.map((entry) => [entry.action, entry.before?.blockedAdvertisers, entry.after.blockedAdvertisers]),
    ).toEqual([
      ['create', undefined, [advertiser]],
      ['update', [advertiser], []],
    ]);
  });

  it('leaves a blocked advertiser’s campaigns out of fetch and answers their events 404, for that partner only, on every instance', async () => {
    t = await createTestApp({ engine });
    const [kept] = await t.addCampaigns([campaign()], 'Kept Ads');
    const [first, second] = await t.addCampaigns(
      [campaign(), campaign({ category: 'sports' })],
      'Blocked Ads',
    );
    const blockedAdvertiser = await advertiserOf(t.store, first);
    const other = await t.partners.createKey((await t.partners.createPartner('Unblocking Partner')).id);
    // Another instance, loaded before the change: the change feed brings it the block.
    const instance = new ServingState(t.store, QUIET, 60_000);
    await instance.load();
    expect(await served()).toEqual([kept, first, second]);

    const changed = await t.admin('PATCH', `/partners/${await partnerId()}`, {
      blockedAdvertisers: [blockedAdvertiser],
    });
    expect(changed.statusCode, changed.body).toBe(200);
    await t.state.refresh();
    for (let i = 0; i < 10; i++) expect(await served()).toEqual([kept]);
    for (const campaignId of [first, second]) {
      for (const kind of ['impression', 'click'] as const) {
        const tracked = await t.track(kind, { campaignId, placement: 'header_banner' });
        expect(tracked.statusCode).toBe(404);
        expect(tracked.json()).toEqual({ status: 'error', message: 'campaign not found' });
      }
    }
    expect((await t.track('impression', { campaignId: kept, placement: 'header_banner' })).statusCode).toBe(
      200,
    );
    // Another partner is served everything.
    expect(await served(other.plaintext)).toEqual([kept, first, second]);

    await instance.refresh();
    expect(instance.key(digestApiKey(t.apiKey))?.blockedAdvertisers).toEqual([blockedAdvertiser]);
    const drawn = instance.index.select(
      { placement: 'header_banner', limit: 10 },
      Date.now(),
      instance.key(digestApiKey(t.apiKey)),
    );
    expect(drawn.map((c) => c.id)).toEqual([kept]);
  });

  it('lets the partner’s own people block the advertisers of campaigns they may be served, and no other', async () => {
    t = await createTestApp({ engine });
    const [served] = await t.addCampaigns([campaign()], 'Served Ads');
    const [draft] = await t.addCampaigns([campaign({ status: 'draft' })], 'Draft Ads');
    const [servedAdvertiser, draftAdvertiser] = [
      await advertiserOf(t.store, served),
      await advertiserOf(t.store, draft),
    ];
    const partner = await partnerId();
    const token = async (role: 'manager' | 'reporter') =>
      (await t.services.tokens.create({ label: role, account: `partner:${partner}`, role })).plaintext;
    const manager = await token('manager');

    const blocked = await t.admin(
      'PATCH',
      `/partners/${partner}`,
      { blockedAdvertisers: [servedAdvertiser] },
      manager,
    );
    expect(blocked.statusCode, blocked.body).toBe(200);
    expect(blocked.json().data.blockedAdvertisers).toEqual([servedAdvertiser]);
    // An advertiser with no campaign approved to serve reads as unknown to the partner (D13).
    const hidden = await t.admin(
      'PATCH',
      `/partners/${partner}`,
      { blockedAdvertisers: [draftAdvertiser] },
      manager,
    );
    expect(hidden.statusCode).toBe(400);
    expect(hidden.json().message).toBe(`blockedAdvertisers names an unknown advertiser: ${draftAdvertiser}`);
    // Once blocked, an advertiser stays blockable whatever its campaigns become.
    await t.admin('POST', `/campaigns/${served}/pause`);
    await t.admin('POST', `/campaigns/${served}/archive`);
    const kept = await t.admin(
      'PATCH',
      `/partners/${partner}`,
      { blockedAdvertisers: [servedAdvertiser] },
      manager,
    );
    expect(kept.statusCode, kept.body).toBe(200);
    // Categories and the name stay the operator's; a reporter changes nothing.
    expect(
      (await t.admin('PATCH', `/partners/${partner}`, { blockedCategories: ['politics'] }, manager))
        .statusCode,
    ).toBe(403);
    expect(
      (await t.admin('PATCH', `/partners/${partner}`, { blockedAdvertisers: [], name: 'Renamed' }, manager))
        .statusCode,
    ).toBe(403);
    expect(
      (await t.admin('PATCH', `/partners/${partner}`, { blockedAdvertisers: [] }, await token('reporter')))
        .statusCode,
    ).toBe(403);
    // Audited as the partner's token, the one that made the change.
    const trail = (await t.admin('GET', `/audit?objectType=partner&objectId=${partner}`)).json().data;
    expect(trail.at(-1)).toMatchObject({ actor: expect.stringMatching(/^admin:\d+$/), action: 'update' });
    expect(trail.at(-1).actor).not.toBe(trail[0].actor);
  });
});
