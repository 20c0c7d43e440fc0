import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DOUBLE_CLICK_WINDOW_MS, REASONS } from '../src/domain/verdicts.js';
import { ServingState } from '../src/serving/serving-state.js';
import { campaign, createTestApp, storedVerdicts, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';

let t: TestApp;
let now: number;
afterEach(() => t.close());

let engine: (typeof ENGINES)[number] = 'sqlite';
async function start(at: string) {
  now = Date.parse(at);
  t = await createTestApp({ engine, clock: () => now });
}
const impression = (id: number) => t.track('impression', { campaignId: id, placement: 'header_banner' });
const click = (id: number) => t.track('click', { campaignId: id, placement: 'header_banner' });
const served = async () =>
  (await t.fetch('placement=header_banner')).json().data.map((c: { id: number }) => c.id);
/** What fetch serves once the clock reads `at` (or now) and the index has caught up. */
const servedAt = async (at?: string) => {
  if (at !== undefined) now = Date.parse(at);
  await t.state.refresh();
  return (await served()).sort();
};
const status = async (id: number) => (await t.admin('GET', `/campaigns/${id}`)).json().data.status;

// Caps are applied in the batch's transaction, which differs by engine (see Store.insertEvents).
describe.each(ENGINES)('caps on %s', (name) => {
  beforeEach(() => {
    engine = name;
  });

  it('completes a campaign when its total impression cap is reached, and serves it no more', async () => {
    await start('2026-06-01T12:00:00Z');
    const [capped, free] = await t.addCampaigns([campaign({ caps: { impressionsTotal: 3 } }), campaign()]);
    for (let i = 0; i < 3; i++) expect((await impression(capped)).statusCode).toBe(200);
    expect(await status(capped)).toBe('completed');
    await t.state.refresh();
    expect(await served()).toEqual([free]);
    expect((await impression(capped)).statusCode).toBe(404);
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${capped}`)).json().data;
    expect(trail.at(-1)).toMatchObject({ actor: 'system', action: 'complete', reason: 'total cap reached' });
  });

  it('reopens a campaign completed by its total cap when the cap is raised or removed', async () => {
    await start('2026-06-01T12:00:00Z');
    const endAt = '2026-07-01T00:00:00Z';
    const [raised, removed] = await t.addCampaigns([
      campaign({ endAt, caps: { impressionsTotal: 2 } }),
      campaign({ endAt, caps: { impressionsTotal: 1, clicksDaily: 10 } }),
    ]);
    for (const id of [raised, raised, removed]) await impression(id);
    expect([await status(raised), await status(removed)]).toEqual(['completed', 'completed']);
    for (const action of ['resume', 'approve', 'submit'])
      expect((await t.admin('POST', `/campaigns/${raised}/${action}`)).statusCode).toBe(409);

    // A cap still reached changes nothing.
    const still = await t.admin('PATCH', `/campaigns/${raised}`, { caps: { impressionsTotal: 2 } });
    expect(still.json().data.status).toBe('completed');

    const patched = await t.admin('PATCH', `/campaigns/${raised}`, { caps: { impressionsTotal: 3 } });
    expect(patched.json().data.status).toBe('paused');
    expect(
      (await t.admin('PATCH', `/campaigns/${removed}`, { caps: { clicksDaily: 10 } })).json().data.status,
    ).toBe('paused');
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${raised}`)).json().data;
    expect(trail.at(-1)).toMatchObject({ action: 'update', reason: expect.stringContaining('paused') });

    // Paused, it waits for the operator; resumed, it serves until the new cap.
    await t.state.refresh();
    expect(await served()).toEqual([]);
    const resumed = await t.admin('POST', `/campaigns/${raised}/resume`);
    expect(resumed.json().data.status).toBe('running');
    await t.state.refresh();
    expect(await served()).toEqual([raised]);
    expect((await impression(raised)).statusCode).toBe(200);
    expect(await status(raised)).toBe('completed');
  });

  it('keeps a completed campaign final once its flight is over, whatever its caps', async () => {
    await start('2026-06-01T12:00:00Z');
    const endAt = '2026-06-01T13:00:00Z';
    const [byEnd, byCap] = await t.addCampaigns([
      campaign({ endAt, caps: { impressionsTotal: 1 } }),
      campaign({ endAt, caps: { impressionsTotal: 1 } }),
    ]);
    await impression(byCap);
    now = Date.parse(endAt);
    await t.services.lifecycle.runOnce();
    for (const id of [byEnd, byCap]) {
      expect(await status(id)).toBe('completed');
      const patched = await t.admin('PATCH', `/campaigns/${id}`, { caps: { impressionsTotal: 100 } });
      expect(patched.json().data.status).toBe('completed');
      expect((await t.admin('POST', `/campaigns/${id}/resume`)).statusCode).toBe(409);
    }
  });

  it('completes on a total click cap, counting only clicks', async () => {
    await start('2026-06-01T12:00:00Z');
    const [capped] = await t.addCampaigns([campaign({ caps: { clicksTotal: 2 } })]);
    for (let i = 0; i < 5; i++) await impression(capped);
    expect(await status(capped)).toBe('running');
    await click(capped);
    expect(await status(capped)).toBe('running');
    now += DOUBLE_CLICK_WINDOW_MS; // another person's click, not a double click of the first (D15)
    await click(capped);
    expect(await status(capped)).toBe('completed');
  });

  it('gives a click nothing to consume from an impression stored past the cap, with or without a token', async () => {
    await start('2026-06-01T12:00:00Z');
    const [capped] = await t.addCampaigns([campaign({ caps: { impressionsTotal: 5 } })]);
    const token = (await t.fetch('placement=header_banner&tokens=true')).json().data[0].token as string;
    // Other instances took the cap's last units; this one's index has not learnt of it yet, so it
    // takes the displays, and the store makes them `past cap`.
    await t.store.db
      .insertInto('campaign_counters')
      .values({ campaign_id: capped, day: 'total', impressions: 5, clicks: 0 })
      .execute();
    const tokened = { campaignId: capped, placement: 'header_banner', token };
    const answers = [
      (await impression(capped)).statusCode,
      (await t.track('impression', tokened)).statusCode,
    ];
    now += 2_000;
    answers.push((await click(capped)).statusCode, (await t.track('click', tokened)).statusCode);
    expect(await storedVerdicts(t.store)).toEqual([
      'impression:invalid:past cap',
      'impression:invalid:past cap',
      'click:invalid:click without impression',
      'click:invalid:click without impression',
    ]);
    expect(answers).toEqual([200, 200, 200, 200]);
  });

  /**
   * From `at`, a campaign of `timeZone` capped at two impressions a day, beside a free one: shown
   * twice, it is held (still running) until `midnight`, its next local midnight, and served from then.
   */
  async function heldAtDailyCap(timeZone: string, at: string, midnight: string): Promise<[number, number]> {
    await start(at);
    const [capped, free] = (await t.addCampaigns([
      campaign({ timeZone, caps: { impressionsDaily: 2 } }),
      campaign(),
    ])) as [number, number];
    await impression(capped);
    expect(await served()).toContain(capped);
    await impression(capped);
    const held = (await t.admin('GET', `/campaigns/${capped}`)).json().data;
    expect(held).toMatchObject({ status: 'running', cappedUntil: new Date(midnight).toISOString() });
    expect(await servedAt()).toEqual([free]);
    expect(await servedAt(new Date(Date.parse(midnight) - 1_000).toISOString())).toEqual([free]);
    expect(await servedAt(midnight)).toEqual([capped, free].sort());
    return [capped, free];
  }

  it('holds a campaign at its daily cap until local midnight in its own time zone', async () => {
    // 23:50 in Tokyo (UTC+9) is 14:50 UTC; the Tokyo day ends at 15:00 UTC.
    const [tokyo, free] = await heldAtDailyCap('Asia/Tokyo', '2026-06-01T14:50:00Z', '2026-06-01T15:00:00Z');
    // A new local day: two more before the next hold.
    await impression(tokyo);
    expect(await servedAt()).toContain(tokyo);
    await impression(tokyo);
    expect(await servedAt()).toEqual([free]);
    expect((await t.admin('GET', `/campaigns/${tokyo}`)).json().data.cappedUntil).toBe(
      '2026-06-02T15:00:00.000Z',
    );
  });

  it('holds a campaign at its daily cap in the last hour before a midnight that daylight saving skips', async () => {
    // Santiago goes from 23:59:59 at -04:00 straight to 01:00 at -03:00 on 6 September 2026, at
    // 04:00 UTC: that instant begins the next local day. 03:30 UTC is 23:30 on 5 September.
    await heldAtDailyCap('America/Santiago', '2026-09-06T03:30:00Z', '2026-09-06T04:00:00Z');
  });

  it('stops serving a campaign at its cap on this instance without waiting for a poll', async () => {
    await start('2026-06-01T12:00:00Z');
    const [capped] = await t.addCampaigns([campaign({ caps: { impressionsDaily: 1 } })]);
    await impression(capped);
    // The helper's state polls once a minute; only the cap callback can have refreshed it within
    // the wait (a third of that minute, however busy the machine).
    await eventually(async () => !(await served()).includes(capped), 'the capped campaign out');
    expect(await served()).toEqual([]);
  });

  it('stores an event shown before a daily cap past the cap, answers 200, and bills nothing, on every instance', async () => {
    await start('2026-06-01T12:00:00Z');
    const [capped] = await t.addCampaigns([campaign({ caps: { impressionsDaily: 2 } })]);
    await impression(capped);
    await impression(capped);
    expect(await servedAt()).toEqual([]);
    // This instance learnt of the cap from its own batch; a display of an earlier answer still comes.
    const late = await impression(capped);
    expect(late.statusCode, late.body).toBe(200);
    // Another instance building its index from the store knows the campaign, and does not draw it.
    const other = new ServingState(t.store, { info: () => {}, error: () => {} }, 60_000, () => now);
    await other.load();
    expect(other.index.campaign(capped, now)?.id).toBe(capped);
    expect(other.index.select({ placement: 'header_banner', limit: 10 }, now)).toEqual([]);
    const stored = await t.store.db
      .selectFrom('events')
      .select(['verdict', 'reason'])
      .where('campaign_id', '=', capped)
      .orderBy('id')
      .execute();
    expect(stored.map((row) => `${row.verdict}:${row.reason ?? ''}`)).toEqual([
      'counted:',
      'counted:',
      `invalid:${REASONS.pastCap}`,
    ]);
  });
});
