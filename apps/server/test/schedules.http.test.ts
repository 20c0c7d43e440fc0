import { afterEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, expectTracked, storedVerdicts, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const MINUTE = 60_000;

/**
 * Dayparting: a campaign's schedule, the hours of the week it may run in its time zone, through the
 * management API (validated, normalised, audited, no review), fetch in and out of its hours (across
 * daylight saving too, with the app's clock set by the test), events after its hours end, and the
 * serving explainer.
 */
describe.each(ENGINES)('campaign schedules, on %s', (engine) => {
  let t: TestApp;
  let now = 0;
  afterEach(() => t.close());

  async function start(at: string, campaigns: unknown[]): Promise<number[]> {
    now = Date.parse(at);
    t = await createTestApp({ engine, clock: () => now });
    return t.addCampaigns(campaigns);
  }
  const served = async (): Promise<number[]> =>
    ((await t.fetch('placement=header_banner')).json().data as Array<{ id: number }>).map((c) => c.id);

  it('is created, read back normalised, changed without review and audited; null runs at every hour', async () => {
    const [running] = await start('2026-06-01T12:00:00Z', [campaign()]);
    const advertiserId = (await t.campaigns.get(running)).advertiserId;
    const created = await t.admin('POST', '/campaigns', {
      advertiserId,
      title: 'Office hours',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
      timeZone: 'Europe/Berlin',
      schedule: {
        sat: [[10, 14]],
        mon: [
          [13, 17],
          [9, 13],
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    expect(created.json().data.schedule).toEqual({ mon: [[9, 17]], sat: [[10, 14]] });
    expect((await t.admin('GET', `/campaigns/${id}`)).json().data.schedule).toEqual({
      mon: [[9, 17]],
      sat: [[10, 14]],
    });
    expect((await t.admin('GET', `/campaigns/${running}`)).json().data.schedule).toBeNull();

    // An approved, running campaign keeps running: the schedule says when it is shown, like its flight.
    const changed = await t.admin('PATCH', `/campaigns/${running}`, { schedule: { fri: [[18, 24]] } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().data).toMatchObject({ status: 'running', schedule: { fri: [[18, 24]] } });
    const removed = await t.admin('PATCH', `/campaigns/${running}`, { schedule: null });
    expect(removed.json().data.schedule).toBeNull();
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${running}`)).json()
      .data as Array<{
      action: string;
      before: { schedule?: unknown };
      after: { schedule?: unknown };
    }>;
    const changes = trail
      .filter((entry) => entry.action === 'update')
      .map((entry) => [entry.before.schedule, entry.after.schedule]);
    expect(changes).toEqual(
      expect.arrayContaining([
        [null, { fri: [[18, 24]] }],
        [{ fri: [[18, 24]] }, null],
      ]),
    );
  });

  it('refuses a malformed schedule, naming the day or range at fault', async () => {
    const [id] = await start('2026-06-01T12:00:00Z', [campaign()]);
    const refused = async (schedule: unknown) => {
      const response = await t.admin('PATCH', `/campaigns/${id}`, { schedule });
      expect(response.statusCode, response.body).toBe(422);
      return response.json().problems as Array<{ field: string; message: string }>;
    };
    expect(await refused({ mon: [[17, 9]] })).toEqual([
      {
        field: 'schedule.mon[0]',
        message: expect.stringContaining('must be [from, to]: whole hours with 0 <= from < to <= 24'),
      },
    ]);
    expect(await refused({ weekdays: [[9, 17]] })).toEqual([
      // Named like any field the API does not know (the import file's check names the weekdays).
      { field: 'schedule.weekdays', message: 'is not a known field' },
    ]);
    expect(await refused({})).toEqual([
      { field: 'schedule', message: 'must allow at least one hour (null runs at every hour)' },
    ]);
    expect(await refused('9-17')).toEqual([
      { field: 'schedule', message: expect.stringContaining('{"mon": [[9, 17]], "sat": [[10, 14]]}') },
    ]);
    expect((await t.campaigns.get(id)).schedule).toBeNull();
  });

  it('is fetched in its hours only, in its time zone; an event after its hours end still counts', async () => {
    // Monday 2026-06-01, Berlin is UTC+2: 9:00 to 17:00 there is 07:00 to 15:00 UTC.
    const [scheduled, always] = await start('2026-06-01T06:59:00Z', [
      campaign({ title: 'Office hours', timeZone: 'Europe/Berlin', schedule: { mon: [[9, 17]] } }),
      campaign({ title: 'Always' }),
    ]);
    expect(await served()).toEqual([always]);
    now = Date.parse('2026-06-01T07:00:00Z');
    expect((await served()).sort()).toEqual([scheduled, always].sort());
    now = Date.parse('2026-06-01T14:59:59Z');
    expect(await served()).toContain(scheduled);
    // Fetched just before its hours ended, displayed and reported just after: counted.
    now = Date.parse('2026-06-01T15:00:30Z');
    expect(await served()).toEqual([always]);
    expectTracked(
      await t.track('impression', { campaignId: scheduled, placement: 'header_banner' }),
      'impression',
    );
    expect(await storedVerdicts(t.store)).toEqual(['impression:counted:']);
    // Tuesday: not at all.
    now = Date.parse('2026-06-02T10:00:00Z');
    expect(await served()).toEqual([always]);
  });

  it('skips a Sunday 2:00 that daylight saving skips and runs a repeated one twice, in Berlin and New York', async () => {
    const [berlin, newYork] = await start('2026-03-28T23:30:00Z', [
      campaign({ title: 'Berlin', timeZone: 'Europe/Berlin', schedule: { sun: [[2, 3]] } }),
      campaign({ title: 'New York', timeZone: 'America/New_York', schedule: { sun: [[2, 3]] } }),
    ]);
    const servedAt = async (iso: string) => {
      now = Date.parse(iso);
      return served();
    };
    // Berlin, 2026-03-29: 01:00 CET (00:00 UTC) is followed by 03:00 CEST (01:00 UTC).
    expect(await servedAt('2026-03-29T00:30:00Z')).toEqual([]);
    expect(await servedAt('2026-03-29T01:30:00Z')).toEqual([]);
    // New York, 2026-03-08 (a Sunday earlier): 01:00 EST (06:00 UTC) is followed by 03:00 EDT (07:00 UTC).
    expect(await servedAt('2026-03-08T06:30:00Z')).toEqual([]);
    expect(await servedAt('2026-03-08T07:30:00Z')).toEqual([]);
    // An ordinary Sunday in each: 02:00 runs.
    expect(await servedAt('2026-04-05T00:30:00Z')).toEqual([berlin]);
    expect(await servedAt('2026-04-05T06:30:00Z')).toEqual([newYork]);
    // Berlin, 2026-10-25: 02:00 CEST (00:00 UTC) and 02:00 CET (01:00 UTC) both run.
    expect(await servedAt('2026-10-25T00:30:00Z')).toEqual([berlin]);
    expect(await servedAt('2026-10-25T01:30:00Z')).toEqual([berlin]);
    expect(await servedAt('2026-10-25T02:30:00Z')).toEqual([]);
    // New York, 2026-11-01: 01:00 repeats, 02:00 EST (07:00 UTC) runs once.
    expect(await servedAt('2026-11-01T06:30:00Z')).toEqual([]);
    expect(await servedAt('2026-11-01T07:30:00Z')).toEqual([newYork]);
    expect(await servedAt('2026-11-01T08:30:00Z')).toEqual([]);
  });

  it('the explainer says the schedule is why it is not served now, and when it next runs', async () => {
    const [id] = await start('2026-06-01T15:10:00Z', [
      campaign({ timeZone: 'Europe/Berlin', schedule: { mon: [[9, 17]], sat: [[10, 14]] } }),
    ]);
    const why = (await t.admin('GET', `/campaigns/${id}/why?placement=header_banner`)).json().data;
    expect(why).toMatchObject({ eligible: false, chance: null });
    expect(why.reasons).toEqual([
      {
        code: 'outside_schedule',
        schedule: 'mon 9-17; sat 10-14',
        timeZone: 'Europe/Berlin',
        nextRunAt: '2026-06-06T08:00:00.000Z',
        message: expect.stringMatching(
          /^It runs only in its scheduled hours \(mon 9-17; sat 10-14, Europe\/Berlin time\): it is served again from /,
        ),
      },
    ]);
    now = Date.parse('2026-06-06T08:00:00Z') + MINUTE;
    expect((await t.admin('GET', `/campaigns/${id}/why?placement=header_banner`)).json().data.eligible).toBe(
      true,
    );
  });
});
