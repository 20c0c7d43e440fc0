import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { digestApiKey } from '../src/domain/api-keys.js';
import { CLI_ACTOR } from '../src/services/audit.js';
import { CampaignService } from '../src/services/campaigns.js';
import { PartnerService } from '../src/services/partners.js';
import { ServingState } from '../src/serving/serving-state.js';
import type { Store } from '../src/store/store.js';
import { campaign } from './helpers/app.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';
import { PROPAGATION_MS } from './helpers/eventually.js';

/** Polls until the condition holds and returns how long that took; fails after `limitMs`. */
async function within(limitMs: number, condition: () => boolean): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error(`condition not met within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

describe.each(ENGINES)('serving state on %s: changes from elsewhere are served', (engine) => {
  // The state's clock is the test's: a hold or a flight that ends does so when the test moves the
  // clock, not while a busy machine is still reloading.
  let now: number;
  let database: TestDatabase;
  let store: Store;
  let other: Store;
  let state: ServingState;
  beforeEach(async () => {
    database = await createDatabase(engine);
    store = await database.open();
    // `other` stands for the CLI or another instance: a separate connection to the same store.
    other = await database.open();
    now = Date.now();
    state = new ServingState(store, pino({ level: 'silent' }), 500, () => now);
    await state.load();
    state.start();
  });
  afterEach(async () => {
    state.stop();
    await store.close();
    await other.close();
    await database.drop();
  });

  const served = (placement = 'header_banner') =>
    state.index.select({ placement, limit: 100 }, now).map((c) => c.id);

  it('serves a campaign imported through another connection', async () => {
    const { campaignIds } = await new CampaignService(other).import(
      {
        advertisers: [{ name: 'Elsewhere', campaigns: [campaign()] }],
      },
      { approve: true },
    );
    await within(PROPAGATION_MS, () => served().includes(campaignIds[0]));
  });

  it('drops a campaign paused by hand in SQL', async () => {
    const { campaignIds } = await new CampaignService(other).import(
      {
        advertisers: [{ name: 'Elsewhere', campaigns: [campaign(), campaign()] }],
      },
      { approve: true },
    );
    await within(PROPAGATION_MS, () => served().length === 2);
    await sql`update campaigns set status = 'paused' where id = ${campaignIds[0]}`.execute(other.db);
    await within(PROPAGATION_MS, () => !served().includes(campaignIds[0]));
    expect(served()).toEqual([campaignIds[1]]);
  });

  it('applies changes to campaigns in place, and rebuilds only for what the log cannot name', async () => {
    expect(state.fullBuilds).toBe(1);
    const { campaignIds } = await new CampaignService(other).import(
      { advertisers: [{ name: 'Elsewhere', campaigns: [campaign(), campaign()] }] },
      { approve: true },
    );
    const [first, second] = campaignIds as [number, number];
    await within(PROPAGATION_MS, () => served().length === 2);
    await sql`update campaigns set status = 'paused' where id = ${first}`.execute(other.db);
    await within(PROPAGATION_MS, () => !served().includes(first));
    // A daily cap's hold: out at once, back when it ends, both in place.
    await sql`update campaigns set capped_until = ${now + 1000} where id = ${second}`.execute(other.db);
    await within(PROPAGATION_MS, () => served().length === 0);
    now += 1000;
    await within(PROPAGATION_MS, () => served().includes(second));
    expect(state.fullBuilds).toBe(1);
    expect(state.changesApplied).toBeGreaterThanOrEqual(4);
    // A placement is not a campaign: the log has no row for it, so the index is built whole.
    await sql`update placements set enabled = 0 where id = 'sidebar_top'`.execute(other.db);
    await within(PROPAGATION_MS, () => state.fullBuilds === 2);
    expect(served()).toEqual([second]);
  });

  it('forgets a revoked key and learns a new one', async () => {
    const partners = new PartnerService(other);
    const partner = await partners.createPartner('Elsewhere');
    const { plaintext, key } = await partners.createKey(partner.id);
    await within(PROPAGATION_MS, () => state.key(digestApiKey(plaintext)) !== undefined);
    await partners.revokeKey(key.id);
    await within(PROPAGATION_MS, () => state.key(digestApiKey(plaintext)) === undefined);
  });

  it('drops a campaign when its end time passes, with no write to the store', async () => {
    const { campaignIds } = await new CampaignService(other).import(
      {
        advertisers: [
          { name: 'Ending', campaigns: [campaign({ endAt: new Date(now + 60_000).toISOString() })] },
        ],
      },
      { approve: true },
    );
    await within(PROPAGATION_MS, () => state.index.size === 1);
    now += 60_000;
    await within(PROPAGATION_MS, () => state.index.size === 0);
    expect(state.index.campaign(campaignIds[0])).toBeUndefined();
  });

  it('checks the feed again for a change told while a check that read it earlier was under way', async () => {
    state.stop(); // only the service's word may bring the change in
    const { campaignIds } = await new CampaignService(store).import(
      { advertisers: [{ name: 'Here', campaigns: [campaign()] }] },
      { approve: true },
    );
    const [id] = campaignIds as [number];
    await state.refresh();
    expect(served()).toEqual([id]);
    // A check that read the feed before the pause commits, and answers only after it.
    const before = await store.changeVersions();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    vi.spyOn(store, 'changeVersions').mockImplementationOnce(async () => {
      await answered;
      return before;
    });
    const early = state.refresh();
    await new CampaignService(store, CLI_ACTOR, () => now, state).act(id, 'pause');
    answer();
    await early;
    await within(PROPAGATION_MS, () => !served().includes(id));
  });
});
