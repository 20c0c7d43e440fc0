import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_GROUP_COMMIT, GroupCommitSink } from '../src/ingest/group-commit.js';
import type { Store } from '../src/store/store.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';

describe.each(ENGINES)('tracking on %s', (engine) => {
  let t: TestApp;
  let bannerCampaign: number;
  let pausedCampaign: number;
  beforeEach(async () => {
    t = await createTestApp({ engine });
    [bannerCampaign, pausedCampaign] = await t.addCampaigns([campaign(), campaign({ status: 'paused' })]);
  });
  afterEach(() => t.close());

  const KINDS = [
    ['impression', 'Impression tracked successfully'],
    ['click', 'Click tracked successfully'],
  ] as const;

  describe.each(KINDS)('POST /api/v1/campaigns/%s', (kind, message) => {
    const valid = () => ({ campaignId: bannerCampaign, placement: 'header_banner' });

    it('answers 200 with exactly the contract acknowledgement and stores the event', async () => {
      // A click is billable after an impression it can consume (D15).
      if (kind === 'click') expect((await t.track('impression', valid())).statusCode).toBe(200);
      const sentAt = Date.now();
      const res = await t.track(kind, { ...valid(), location: 'us', device: 'Mobile' });
      const answeredAt = Date.now();
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(JSON.stringify({ status: 'success', message }));
      const event = await t.store.db
        .selectFrom('events')
        .selectAll()
        .where('kind', '=', kind)
        .executeTakeFirst();
      expect(event).toMatchObject({
        kind,
        campaign_id: bannerCampaign,
        placement_id: 'header_banner',
        country: 'US',
        device: 'mobile',
        api_key_id: t.apiKeyId,
        verdict: 'counted',
      });
      // Stamped when it arrived: between the request and its answer, however long that took.
      expect(Number(event?.occurred_at)).toBeGreaterThanOrEqual(sentAt);
      expect(Number(event?.occurred_at)).toBeLessThanOrEqual(answeredAt);
    });

    it('stores optional fields as absent when not given', async () => {
      expect((await t.track(kind, valid())).statusCode).toBe(200);
      const [event] = await t.store.db.selectFrom('events').select(['country', 'device']).execute();
      expect(event).toEqual({ country: null, device: null });
    });

    it('accepts a charset parameter on the content type', async () => {
      const res = await t.track(kind, valid(), { 'content-type': 'application/json; charset=utf-8' });
      expect(res.statusCode).toBe(200);
    });

    const rejections: Array<[string, unknown, number, string]> = [
      ['campaignId missing', { placement: 'header_banner' }, 400, 'campaignId is required'],
      ['campaignId null', { campaignId: null, placement: 'header_banner' }, 400, 'campaignId is required'],
      [
        'campaignId a string',
        { campaignId: '1', placement: 'header_banner' },
        400,
        'campaignId must be a positive integer',
      ],
      [
        'campaignId a float',
        { campaignId: 1.5, placement: 'header_banner' },
        400,
        'campaignId must be a positive integer',
      ],
      [
        'campaignId zero',
        { campaignId: 0, placement: 'header_banner' },
        400,
        'campaignId must be a positive integer',
      ],
      [
        'campaignId negative',
        { campaignId: -4, placement: 'header_banner' },
        400,
        'campaignId must be a positive integer',
      ],
      [
        'campaignId a boolean',
        { campaignId: true, placement: 'header_banner' },
        400,
        'campaignId must be a positive integer',
      ],
      ['placement missing', { campaignId: 1 }, 400, 'placement is required'],
      ['placement unknown', { campaignId: 1, placement: 'nowhere' }, 400, 'unknown placement: nowhere'],
      [
        'location invalid',
        { campaignId: 1, placement: 'header_banner', location: 'USA' },
        400,
        'location must be an ISO 3166-1 alpha-2 country code',
      ],
      [
        'device invalid',
        { campaignId: 1, placement: 'header_banner', device: 'watch' },
        400,
        'device must be one of: mobile, desktop, tablet',
      ],
      ['campaign unknown', { campaignId: 999999, placement: 'header_banner' }, 404, 'campaign not found'],
    ];

    it.each(rejections)('rejects %s', async (_name, body, status, expected) => {
      const res = await t.track(kind, body);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ status: 'error', message: expected });
      expect(await t.store.countEvents()).toBe(0);
    });

    it('answers 404 for a campaign that is not running', async () => {
      const res = await t.track(kind, { campaignId: pausedCampaign, placement: 'header_banner' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ status: 'error', message: 'campaign not found' });
    });

    it('answers 400 for a running campaign reported in a placement it is not served in', async () => {
      const res = await t.track(kind, { campaignId: bannerCampaign, placement: 'footer_banner' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        status: 'error',
        message: `campaign ${bannerCampaign} is not served in placement footer_banner`,
      });
    });

    it.each([
      ['text/plain', 'x'],
      ['application/x-www-form-urlencoded', 'campaignId=1&placement=header_banner'],
      ['application/jsonp', '{}'],
    ])('answers 415 for Content-Type %s', async (contentType, payload) => {
      const res = await t.track(kind, payload, { 'content-type': contentType });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({ status: 'error', message: 'Content-Type must be application/json' });
    });

    it('answers 415 without a Content-Type', async () => {
      const res = await t.request({
        method: 'POST',
        url: `/api/v1/campaigns/${kind}`,
        headers: { authorization: `Bearer ${t.apiKey}` },
      });
      expect(res.statusCode).toBe(415);
    });

    it.each([
      '{not json',
      '[1,2]',
      '"text"',
      '42',
      'null',
      '',
      '{"__proto__":{"polluted":true},"campaignId":1}',
    ])('answers 400 for the body %j', async (payload) => {
      const res = await t.track(kind, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ status: 'error', message: 'request body must be a JSON object' });
    });

    it('answers 413 for a body over 16 KiB', async () => {
      const res = await t.track(kind, { ...valid(), padding: 'x'.repeat(16 * 1024) });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ status: 'error', message: 'request body too large' });
    });

    it('ignores unknown body fields', async () => {
      expect((await t.track(kind, { ...valid(), sessionId: 'abc' })).statusCode).toBe(200);
    });
  });

  describe('event durability (D5, D8)', () => {
    it('answers 503 with Retry-After, never 200, when the store cannot record the event', async () => {
      const failing = { insertEvents: () => Promise.reject(new Error('disk I/O error at /secret/path')) };
      const broken = await createTestApp({
        engine,
        events: () => new GroupCommitSink(failing, () => undefined),
      });
      try {
        const [id] = await broken.addCampaigns([campaign()]);
        const res = await broken.track('impression', { campaignId: id, placement: 'header_banner' });
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('1');
        expect(res.json()).toEqual({ status: 'error', message: 'service unavailable' });
        expect(res.body).not.toContain('secret');
      } finally {
        await broken.close();
      }
    });

    it('commits concurrent events in shared transactions and stores every one it acknowledged', async () => {
      const grouped = await createTestApp({
        engine,
        events: (store, onCap) => {
          const counting = {
            insertEvents: (events: Parameters<Store['insertEvents']>[0]) => {
              batches.push(events.length);
              return store.insertEvents(events);
            },
          };
          // A linger makes the sharing visible here, where client and server share one event loop;
          // the default (the end of the loop turn) groups what arrives together under real load.
          return new GroupCommitSink(counting, () => undefined, onCap, {
            ...DEFAULT_GROUP_COMMIT,
            lingerMs: 2,
          });
        },
      });
      const batches: number[] = [];
      try {
        const [id] = await grouped.addCampaigns([campaign()]);
        const responses = await Promise.all(
          Array.from({ length: 200 }, () =>
            grouped.track('impression', { campaignId: id, placement: 'header_banner' }),
          ),
        );
        expect(responses.every((res) => res.statusCode === 200)).toBe(true);
        expect(await grouped.store.countEvents({ campaignId: id })).toBe(200);
        expect(batches.reduce((a, b) => a + b, 0)).toBe(200);
        expect(batches.length).toBeLessThan(200);
      } finally {
        await grouped.close();
      }
    });

    it('answers 503 with Retry-After when the queue of events is full', async () => {
      let release: () => void = () => undefined;
      let sink: GroupCommitSink | undefined;
      const stalled = await createTestApp({
        engine,
        events: (store) =>
          (sink = new GroupCommitSink(
            {
              insertEvents: async (events) => {
                await new Promise<void>((resolve) => (release = resolve));
                return store.insertEvents(events);
              },
            },
            () => undefined,
            undefined,
            { maxBatch: 10, maxQueue: 2, lingerMs: 1, concurrency: 1 },
          )),
      });
      try {
        const [id] = await stalled.addCampaigns([campaign()]);
        const body = { campaignId: id, placement: 'header_banner' };
        const accepted = [stalled.track('impression', body), stalled.track('impression', body)];
        // Both taken (queued or in the stalled commit) however long the requests take to arrive.
        await eventually(() => sink?.depth === 2, 'two events in the queue');
        const refused = await stalled.track('impression', body);
        expect(refused.statusCode).toBe(503);
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.json()).toEqual({ status: 'error', message: 'service unavailable' });
        release();
        expect((await Promise.all(accepted)).map((res) => res.statusCode)).toEqual([200, 200]);
        expect(await stalled.store.countEvents()).toBe(2);
      } finally {
        release();
        await stalled.close();
      }
    });

    it('tells every subscriber (the partner API among them) of each settled batch', async () => {
      let settled = 0;
      t.services.appDeps.onEventsSettled?.(() => settled++);
      const body = { campaignId: bannerCampaign, placement: 'header_banner' };
      expect((await t.track('impression', body)).statusCode).toBe(200);
      expect(settled).toBe(1);
      expect((await t.track('click', body)).statusCode).toBe(200);
      expect(settled).toBe(2);
    });

    it('answers only after the event is committed: the row is visible to another connection at once', async () => {
      const other = await t.database.open();
      try {
        for (let i = 1; i <= 5; i++) {
          expect(
            (await t.track('click', { campaignId: bannerCampaign, placement: 'header_banner' })).statusCode,
          ).toBe(200);
          expect(await other.countEvents({ kind: 'click' })).toBe(i);
        }
      } finally {
        await other.close();
      }
    });
  });
});
