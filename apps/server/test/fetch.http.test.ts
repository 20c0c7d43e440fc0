import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CAMPAIGN_STATUSES } from '../src/domain/campaigns.js';
import { campaign, createTestApp, inStatus, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

describe.each(ENGINES)('fetch on %s', (engine) => {
  let t: TestApp;
  let now = Date.now();
  beforeEach(async () => {
    now = Date.now();
    t = await createTestApp({ engine, clock: () => now });
  });
  afterEach(() => t.close());

  const ids = (body: { data: Array<{ id: number }> }): number[] =>
    body.data.map((c) => c.id).sort((a, b) => a - b);

  describe('GET /api/v1/campaigns/fetch: success envelope (partner API 2.1, 2.3; D3)', () => {
    it('answers 200 with status, data and count equal to the length of data', async () => {
      await t.addCampaigns([campaign(), campaign(), campaign()]);
      const res = await t.fetch('placement=header_banner');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(Object.keys(body)).toEqual(['status', 'data', 'count']);
      expect(body.status).toBe('success');
      expect(body.data).toHaveLength(3);
      expect(body.count).toBe(body.data.length);
    });

    it('tells partners how long they may reuse the answer, privately (Cache-Control, partner API 7)', async () => {
      const res = await t.fetch('placement=header_banner');
      expect(res.headers['cache-control']).toBe('private, max-age=5');
      const error = await t.fetch('');
      expect(error.statusCode).toBe(400);
      expect(error.headers['cache-control']).toBeUndefined();
      const noCache = await createTestApp({ engine, fetchMaxAgeSeconds: 0 });
      try {
        expect((await noCache.fetch('placement=header_banner')).headers['cache-control']).toBe(
          'private, no-store',
        );
      } finally {
        await noCache.close();
      }
    });

    it('returns exactly the contract fields, omits absent description and category, ISO createdAt', async () => {
      const [full, bare] = await t.addCampaigns([
        campaign({ title: 'Full', description: 'A description', category: 'retail', priority: 2 }),
        campaign({ title: 'Bare', priority: 1 }),
      ]);
      const body = (await t.fetch('placement=header_banner')).json();
      expect(body.data[0]).toEqual({
        id: full,
        title: 'Full',
        description: 'A description',
        category: 'retail',
        destinationUrl: 'https://advertiser.example/landing',
        status: 'running',
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect(body.data[1]).toEqual({
        id: bare,
        title: 'Bare',
        destinationUrl: 'https://advertiser.example/landing',
        status: 'running',
        createdAt: expect.any(String),
      });
      expect(JSON.stringify(body)).not.toContain('null');
    });

    it('returns only running campaigns, and their status is always "running"', async () => {
      const statuses = CAMPAIGN_STATUSES;
      const created = await t.addCampaigns(statuses.map((status) => campaign(inStatus(status, now))));
      const body = (await t.fetch('placement=header_banner')).json();
      expect(ids(body)).toEqual([created[statuses.indexOf('running')]]);
      expect(body.data.every((c: { status: string }) => c.status === 'running')).toBe(true);
    });

    it('answers an empty result with 200, empty data and count 0 (D2)', async () => {
      const res = await t.fetch('placement=sidebar_bottom');
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('{"status":"success","data":[],"count":0}');
    });
  });

  describe('targeting (D3)', () => {
    it('filters by placement', async () => {
      const [banner, inline, both] = await t.addCampaigns([
        campaign({ placements: ['header_banner'] }),
        campaign({ placements: ['article_inline'] }),
        campaign({ placements: ['header_banner', 'article_inline'] }),
      ]);
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([banner, both]);
      expect(ids((await t.fetch('placement=article_inline')).json())).toEqual([inline, both]);
    });

    it('filters by location: campaigns targeting that country or every country; none without location', async () => {
      const [everywhere, us, usCa, fr] = await t.addCampaigns([
        campaign(),
        campaign({ countries: ['US'] }),
        campaign({ countries: ['US', 'CA'] }),
        campaign({ countries: ['FR'] }),
      ]);
      expect(ids((await t.fetch('placement=header_banner&location=US')).json())).toEqual([
        everywhere,
        us,
        usCa,
      ]);
      expect(ids((await t.fetch('placement=header_banner&location=CA')).json())).toEqual([everywhere, usCa]);
      expect(ids((await t.fetch('placement=header_banner&location=JP')).json())).toEqual([everywhere]);
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([everywhere, us, usCa, fr]);
    });

    it('filters by device: campaigns allowing that device or every device; none without device', async () => {
      const [all, mobile, desktopTablet] = await t.addCampaigns([
        campaign(),
        campaign({ devices: ['mobile'] }),
        campaign({ devices: ['desktop', 'tablet'] }),
      ]);
      expect(ids((await t.fetch('placement=header_banner&device=mobile')).json())).toEqual([all, mobile]);
      expect(ids((await t.fetch('placement=header_banner&device=tablet')).json())).toEqual([
        all,
        desktopTablet,
      ]);
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([all, mobile, desktopTablet]);
    });

    it('combines location and device', async () => {
      const [usMobile] = await t.addCampaigns([
        campaign({ countries: ['US'], devices: ['mobile'] }),
        campaign({ countries: ['US'], devices: ['desktop'] }),
        campaign({ countries: ['GB'], devices: ['mobile'] }),
      ]);
      expect(ids((await t.fetch('placement=header_banner&location=US&device=mobile')).json())).toEqual([
        usMobile,
      ]);
    });

    it('accepts location and device in any case (normalised)', async () => {
      const [id] = await t.addCampaigns([campaign({ countries: ['DE'], devices: ['tablet'] })]);
      expect(ids((await t.fetch('placement=header_banner&location=de&device=TABLET')).json())).toEqual([id]);
    });

    it('never serves a campaign whose end time has passed, even before the index is rebuilt', async () => {
      const [ending, open] = await t.addCampaigns([
        campaign({ endAt: new Date(now + 60_000).toISOString() }),
        campaign(),
      ]);
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([ending, open]);
      now += 60_000;
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([open]);
    });

    it('does not serve a campaign before its start time', async () => {
      const [later] = await t.addCampaigns([campaign({ startAt: new Date(now + 60_000).toISOString() })]);
      expect((await t.fetch('placement=header_banner')).json().count).toBe(0);
      now += 60_000;
      // Imported as running with a start ahead, it waits as scheduled for the clock to start it.
      await t.services.lifecycle.runOnce();
      await t.state.refresh();
      expect(ids((await t.fetch('placement=header_banner')).json())).toEqual([later]);
    });
  });

  describe('limit (partner API 4.1, section 8; D2)', () => {
    it('defaults to 10 and cuts the list', async () => {
      await t.addCampaigns(Array.from({ length: 15 }, () => campaign()));
      expect((await t.fetch('placement=header_banner')).json().count).toBe(10);
      expect((await t.fetch('placement=header_banner&limit=3')).json().count).toBe(3);
    });

    it('allows at most 100', async () => {
      await t.addCampaigns(Array.from({ length: 120 }, () => campaign()));
      const body = (await t.fetch('placement=header_banner&limit=100')).json();
      expect(body.count).toBe(100);
      expect(new Set(body.data.map((c: { id: number }) => c.id)).size).toBe(100);
    });

    it.each(['0', '-1', '101', '1.5', 'abc', '', '1e2', '0x10', ' 5'])(
      'rejects limit=%j with 400',
      async (limit) => {
        const res = await t.fetch(`placement=header_banner&limit=${encodeURIComponent(limit)}`);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          status: 'error',
          message: 'limit must be an integer between 1 and 100',
        });
      },
    );
  });

  describe('query validation (partner API 4.1, section 7; D1, D2)', () => {
    it.each(['', 'placement=', 'limit=5'])(
      'answers 400 "placement parameter is required" for %j',
      async (query) => {
        const res = await t.fetch(query);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ status: 'error', message: 'placement parameter is required' });
      },
    );

    it('answers 400 for an unknown placement', async () => {
      const res = await t.fetch('placement=nowhere');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ status: 'error', message: 'unknown placement: nowhere' });
    });

    it('answers 400 for a disabled placement, as for an unknown one', async () => {
      await sql`update placements set enabled = 0 where id = 'interstitial'`.execute(t.store.db);
      await t.state.refresh();
      const res = await t.fetch('placement=interstitial');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ status: 'error', message: 'unknown placement: interstitial' });
    });

    it('knows all 15 placements of D1', async () => {
      const placements = (await t.store.listPlacements()).map((p) => p.id);
      expect(placements).toHaveLength(15);
      for (const placement of placements)
        expect((await t.fetch(`placement=${placement}`)).statusCode).toBe(200);
    });

    it.each(['ZZ', 'USA', 'U', '1', 'EU', 'UK'])('rejects location=%s', async (location) => {
      const res = await t.fetch(`placement=header_banner&location=${location}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        status: 'error',
        message: 'location must be an ISO 3166-1 alpha-2 country code',
      });
    });

    it('accepts XK (Kosovo) as a location', async () => {
      expect((await t.fetch('placement=header_banner&location=XK')).statusCode).toBe(200);
    });

    it.each(['phone', 'tv', '', 'mobiles'])('rejects device=%j', async (device) => {
      const res = await t.fetch(`placement=header_banner&device=${device}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        status: 'error',
        message: 'device must be one of: mobile, desktop, tablet',
      });
    });

    it.each(['placement', 'limit', 'location', 'device'])(
      'answers 400 naming %s when it is given twice',
      async (name) => {
        const values: Record<string, string> = {
          placement: 'header_banner',
          limit: '5',
          location: 'US',
          device: 'mobile',
        };
        const base = Object.entries(values).map(([k, v]) => `${k}=${v}`);
        const res = await t.fetch([...base, `${name}=${values[name]}`].join('&'));
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ status: 'error', message: `${name} parameter must be given only once` });
      },
    );

    it('ignores unknown parameters', async () => {
      const res = await t.fetch('placement=header_banner&utm_source=x&page=2');
      expect(res.statusCode).toBe(200);
    });
  });

  describe('ordering (D4)', () => {
    it('serves higher priority first', async () => {
      const low = await t.addCampaigns(Array.from({ length: 5 }, () => campaign({ priority: 0 })));
      const high = await t.addCampaigns(Array.from({ length: 3 }, () => campaign({ priority: 5 })));
      const mid = await t.addCampaigns(Array.from({ length: 2 }, () => campaign({ priority: 2 })));
      for (let i = 0; i < 20; i++) {
        const order = (await t.fetch('placement=header_banner')).json().data.map((c: { id: number }) => c.id);
        expect(new Set(order.slice(0, 3))).toEqual(new Set(high));
        expect(new Set(order.slice(3, 5))).toEqual(new Set(mid));
        expect(new Set(order.slice(5))).toEqual(new Set(low));
      }
    });

    it('rotates campaigns of one priority in proportion to their weights', async () => {
      const [a, b, c] = await t.addCampaigns([
        campaign({ weight: 1 }),
        campaign({ weight: 1 }),
        campaign({ weight: 2 }),
      ]);
      const firsts = new Map<number, number>();
      const draws = 4000;
      for (let i = 0; i < draws; i++) {
        const first = (await t.fetch('placement=header_banner&limit=1')).json().data[0].id as number;
        firsts.set(first, (firsts.get(first) ?? 0) + 1);
      }
      // Expected shares 25%, 25%, 50%. Four standard deviations of a 4000-draw share is under 3.5%.
      expect((firsts.get(a) ?? 0) / draws).toBeCloseTo(0.25, 1);
      expect((firsts.get(b) ?? 0) / draws).toBeCloseTo(0.25, 1);
      expect((firsts.get(c) ?? 0) / draws).toBeCloseTo(0.5, 1);
      expect(Math.abs((firsts.get(c) ?? 0) / draws - 0.5)).toBeLessThan(0.035);
    });

    it('rotates within a large priority group and never repeats a campaign in one response', async () => {
      const created = await t.addCampaigns(Array.from({ length: 200 }, () => campaign()));
      const seenFirst = new Set<number>();
      for (let i = 0; i < 300; i++) {
        const data = (await t.fetch('placement=header_banner&limit=10')).json().data as Array<{ id: number }>;
        expect(new Set(data.map((d) => d.id)).size).toBe(10);
        seenFirst.add(data[0].id);
      }
      // 300 uniform draws over 200 campaigns hit about 155 distinct ones; a fixed order would hit 1.
      expect(seenFirst.size).toBeGreaterThan(100);
      expect(created).toHaveLength(200);
    });
  });
});
