import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HIGHEST_LIMITS } from '../src/domain/rate-limits.js';
import type { TrackedEvent } from '../src/store/store.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { trackedEvent } from './helpers/tracked-event.js';
import { signedInPerson } from './helpers/people.js';

const HOUR = 3_600_000;

/**
 * Key flags (D15) over real HTTP: each signal flags a key with its evidence, an honest key is never
 * flagged, one open flag per key and signal, review through the management API and the dashboard
 * with its audit trail, the automatic policy (off by default), and scope.
 */
describe.each(ENGINES)('key flags on %s', (engine) => {
  let t: TestApp;
  let now: number;
  let campaignId: number;
  let partnerCount = 0;
  /** Set when a test ends: a loop of requests it left behind stops instead of moving the next test's clock. */
  let ended = false;

  interface Key {
    id: number;
    partnerId: number;
    plaintext: string;
  }

  /** A key of a new partner, with limits high enough for floods. */
  async function newKey(name = `Partner ${++partnerCount}`): Promise<Key> {
    const partner = await t.partners.createPartner(name);
    const { key, plaintext } = await t.partners.createKey(partner.id);
    await t.partners.setKeyLimits(key.id, HIGHEST_LIMITS);
    await t.state.refresh();
    return { id: key.id, partnerId: partner.id, plaintext };
  }

  /** `count` events of `kind` from `key`, `spacingMs` of the test clock apart. */
  async function send(key: Key, kind: 'impression' | 'click', count: number, spacingMs: number) {
    for (let i = 0; i < count; i++) {
      if (ended) throw new Error('the test ended');
      const answer = await t.request({
        method: 'POST',
        url: `/api/v1/campaigns/${kind}`,
        headers: { authorization: `Bearer ${key.plaintext}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ campaignId, placement: 'header_banner' }),
      });
      expect(answer.statusCode).toBe(200);
      now += spacingMs;
    }
  }

  /** One event through the partner API, with the end user's `userAgent` and `userIp` forwarded. */
  async function track(key: Key, kind: 'impression' | 'click', user: { userAgent: string; userIp: string }) {
    const answer = await t.request({
      method: 'POST',
      url: `/api/v1/campaigns/${kind}`,
      headers: { authorization: `Bearer ${key.plaintext}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ campaignId, placement: 'header_banner', ...user }),
    });
    expect(answer.statusCode).toBe(200);
  }

  /**
   * Honest traffic: `displays` impressions `spacingMs` apart, one in `every` clicked (without serve
   * tokens, a click's delay after its impression does not change its verdict).
   */
  async function honest(key: Key, displays: number, spacingMs: number, every = 100) {
    for (let i = 1; i <= displays; i++) {
      await send(key, 'impression', 1, spacingMs);
      if (i % every === 0) await send(key, 'click', 1, 0);
    }
  }

  /**
   * Events stored directly are counted as this instance would have counted them when it stored
   * them: the flag job judges what the instance itself counted (serving/recent-traffic.ts).
   */
  function countedByThisInstance(events: TrackedEvent[]) {
    for (const e of events) {
      const { apiKeyId, partnerId, placement, kind } = e;
      t.services.recentTraffic.record(
        { apiKeyId, partnerId, placement, kind, reason: e.reason ?? '' },
        e.occurredAt,
        e.userAddress,
      );
    }
  }

  /** An event of `key` on the test placement, as the partner API would have stored it. */
  const stored = (
    key: Key,
    kind: 'impression' | 'click',
    occurredAt: number,
    reason: string | null = null,
    userAddress: string | null = null,
  ): TrackedEvent =>
    trackedEvent({
      kind,
      campaignId,
      partnerId: key.partnerId,
      apiKeyId: key.id,
      occurredAt,
      verdict: reason === null ? 'counted' : 'invalid',
      reason,
      userAddress,
    });

  /** Stores events directly, in batches, and counts them as this instance would have. */
  async function storeDirectly(events: TrackedEvent[]) {
    for (let start = 0; start < events.length; start += 6_000)
      await t.store.insertEvents(events.slice(start, start + 6_000));
    countedByThisInstance(events);
  }

  /** What other partners did on the placement over the last day: 20,000 impressions at 1% CTR. */
  async function baseline() {
    const other = await newKey('Baseline Partner');
    const at = (i: number) => now - 23 * HOUR + i * 4_000;
    const events = Array.from({ length: 20_000 }, (_, i) => stored(other, 'impression', at(i)));
    for (let i = 0; i < 200; i++) events.push(stored(other, 'click', at(i * 100 + 1)));
    await storeDirectly(events);
  }

  /**
   * A key's last `durationMs` of traffic, stored directly up to now: an impression every `spacingMs`,
   * one in `every` clicked (0: none). The HTTP path is not what such tests are about, and 2,000
   * requests one after the other outlast a test's timeout on a busy machine.
   */
  async function lastHours(key: Key, durationMs: number, spacingMs: number, every: number) {
    const events: TrackedEvent[] = [];
    for (let i = 1, at = now - durationMs; at < now; i++, at += spacingMs) {
      events.push(stored(key, 'impression', at));
      if (every > 0 && i % every === 0) events.push(stored(key, 'click', at + 1_000));
    }
    await storeDirectly(events);
  }

  const job = () => t.services.flags.runOnce();
  const flagsOf = async (key: Key, status = '') =>
    ((await t.admin('GET', `/flags?limit=200${status && `&status=${status}`}`)).json().data as Flag[]).filter(
      (flag) => flag.apiKeyId === key.id,
    );
  interface Flag {
    id: number;
    apiKeyId: number;
    partnerId: number;
    signal: string;
    status: string;
    summary: string;
    evidence: Record<string, unknown>;
    reviewedBy: string | null;
  }

  /** The operator's person who reviews flags, signed in to the dashboard. */
  const signedInOperator = (role: 'admin' | 'manager' = 'admin') =>
    signedInPerson(t, now, { email: 'ops@example.com', account: 'operator', role });

  /**
   * An honest key and one clicking 20 times its placements' baseline: 2,000 displays in the last
   * 200 s, 1% clicked; then, through the partner API, 200 displays in 100 s, 20% clicked. One pass
   * of the job must flag the second key's click-through rate alone; its flag is returned.
   */
  async function twentyTimesBeside() {
    const honestKey = await newKey('Honest Partner');
    const fraud = await newKey('Twenty Times');
    await lastHours(honestKey, 200_000, 100, 100);
    await honest(fraud, 200, 500, 5);
    const pass = await job();
    expect(pass.raised.map((flag) => [flag.apiKeyId, flag.signal])).toEqual([[fraud.id, 'ctr']]);
    const [flag] = await flagsOf(fraud);
    return { honestKey, fraud, flag };
  }

  beforeEach(async () => {
    ended = false;
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
    [campaignId] = (await t.addCampaigns([campaign()])) as [number];
    await baseline();
  });
  afterEach(async () => {
    ended = true;
    await t?.close();
  });

  it('flags a key clicking 20 times its placements’ baseline, with the evidence, and never an honest key', async () => {
    const { honestKey, fraud, flag } = await twentyTimesBeside();
    expect(flag).toMatchObject({ signal: 'ctr', status: 'open', partnerId: fraud.partnerId });
    expect(flag.summary).toMatch(/^click-through rate 20% is 20× its placements' baseline of 1%/);
    expect(flag.evidence).toMatchObject({
      direction: 'above',
      impressions: 200,
      clicks: 40,
      baselineCtr: 0.01,
      baselineImpressions: 22_000, // the baseline partner's and the honest one's
      baselineSource: 'other partners',
      ratio: 20,
      measure: 20,
      threshold: 5,
      windowEnd: new Date(now).toISOString(),
      windowStart: new Date(now - 5 * 60_000).toISOString(),
      thresholds: { ratio: 5, minClicks: 20 },
    });
    expect(await flagsOf(honestKey)).toEqual([]);
  });

  it('leaves the traffic its verdicts refused out of the baseline, so bots and floods elsewhere flag no honest key', async () => {
    // Another partner's refused traffic on the placement today: 20,000 bot impressions and 4,000
    // clicks without impressions. Counted in, the placement's rate would be 4,200 / 44,000 (9.5%):
    // the honest key's 1% would be far below it, with 190 clicks expected.
    const refused = await newKey('Refused Partner');
    const at = (i: number) => now - 20 * HOUR + i * 1_000;
    const events = Array.from({ length: 20_000 }, (_, i) =>
      stored(refused, 'impression', at(i), 'known bot'),
    );
    for (let i = 0; i < 4_000; i++) events.push(stored(refused, 'click', at(i), 'click without impression'));
    await storeDirectly(events);

    const { honestKey, flag } = await twentyTimesBeside();
    expect(flag.evidence).toMatchObject({
      baselineCtr: 0.01,
      baselineImpressions: 22_000, // billable only: the baseline partner's and the honest one's
      baselineClicks: 220,
      ratio: 20,
    });
    expect(await flagsOf(honestKey)).toEqual([]);
  });

  it('takes a flagged polling key’s impressions out of the baseline, so an honest key clicked 3% of the time is not flagged for them', async () => {
    expect((await t.admin('PUT', '/flag-policy', { autoSuspend: true })).statusCode).toBe(200);
    // A key polling impressions, none clicked: 60,000 in the last 5 minutes, three times the other
    // partner's day. Pooled with it, its placements' rate would be 200 / 80,000 (0.25%).
    const loop = await newKey('Polling Loop');
    await lastHours(loop, 5 * 60_000, 5, 0);
    const first = await job();
    expect(first.raised.map((flag) => [flag.apiKeyId, flag.signal])).toEqual([[loop.id, 'ctr']]);
    // Its baseline is one other key's (the baseline partner's): flagged for review, never suspended
    // by the policy.
    expect(first.suspended).toEqual([]);
    const [looping] = await flagsOf(loop);
    expect(looping.evidence).toMatchObject({ direction: 'below', baselineDominated: true });

    const honestKey = await newKey('Honest at 3%');
    now += 30_000;
    await lastHours(honestKey, 100_000, 50, 33); // 2,000 impressions, 60 clicked
    const second = await job();
    expect(second.raised).toEqual([]);
    expect(second.suspended).toEqual([]);
    expect(await flagsOf(honestKey)).toEqual([]);
    expect((await t.admin('GET', `/keys/${honestKey.id}`)).json().data.status).toBe('active');
  });

  it('takes a polling key found out in a pass out of the baseline before it judges the keys beside it in that pass', async () => {
    // Both send in the same five minutes: a loop's 60,000 unclicked impressions and an honest key
    // clicked 3% of the time. Against the pooled rate the loop pulls down (200 / 80,000, 0.25%), the
    // honest key would look clicked 12 times above its placements; the loop is found out in the
    // same pass, and leaves the baseline before the honest key is judged.
    const loop = await newKey('Polling Loop');
    const honestKey = await newKey('Honest at 3%');
    await lastHours(loop, 5 * 60_000, 5, 0);
    await lastHours(honestKey, 100_000, 50, 33); // 2,000 impressions, 60 clicked
    const pass = await job();
    expect(pass.raised.map((flag) => [flag.apiKeyId, flag.signal])).toEqual([[loop.id, 'ctr']]);
    expect(await flagsOf(honestKey)).toEqual([]);
  });

  it('does not flag a suspended key again, nor, once reinstated, for the evidence it was suspended for', async () => {
    // Suspended by the operator, without a flag: what it sent before is not judged.
    const stopped = await newKey('Stopped Partner');
    await send(stopped, 'click', 25, 4_000);
    expect((await t.admin('POST', `/keys/${stopped.id}/suspend`, { reason: 'fraud' })).statusCode).toBe(200);
    const first = await job();
    expect(first.raised).toEqual([]);
    expect(first.updated).toBe(0);

    // Suspended by the policy for a flag, then reinstated: the same evidence, still in the window,
    // raises no new flag.
    await t.admin('PUT', '/flag-policy', { autoSuspend: true, signals: ['clicks without impressions'] });
    const key = await newKey('Reinstated Partner');
    now += 6 * 60_000;
    await send(key, 'click', 25, 4_000);
    expect((await job()).suspended).toEqual([key.id]);
    now += 30_000;
    expect((await job()).raised).toEqual([]);
    expect((await t.admin('POST', `/keys/${key.id}/reinstate`)).statusCode).toBe(200);
    await t.state.refresh();
    now += 30_000;
    const again = await job();
    expect(again.raised).toEqual([]);
    expect(await flagsOf(key, 'open')).toEqual([]);
    expect((await t.admin('GET', `/keys/${key.id}`)).json().data.status).toBe('active');
  });

  it('flags fraud spread over a partner’s keys, each under the key threshold, as one partner flag the operator reads and acts on', async () => {
    // Five keys of one partner, each clicked 4% of the time against a 1% baseline (4×, under the
    // key threshold of 5×): 500 impressions and 20 clicks each in the last 5 minutes.
    const partner = await t.partners.createPartner('Spread Over Keys');
    const keys: Key[] = [];
    for (let i = 0; i < 5; i++) {
      const { key, plaintext } = await t.partners.createKey(partner.id);
      keys.push({ id: key.id, partnerId: partner.id, plaintext });
    }
    for (const key of keys) await lastHours(key, 5 * 60_000, 600, 25);
    // An honest partner clicked 3% of the time with one key, and one with two keys at 1%.
    const honestAt3 = await newKey('Honest at 3%');
    await lastHours(honestAt3, 5 * 60_000, 150, 33);
    const twoKeys = await t.partners.createPartner('Two Honest Keys');
    for (let i = 0; i < 2; i++) {
      const { key, plaintext } = await t.partners.createKey(twoKeys.id);
      await lastHours({ id: key.id, partnerId: twoKeys.id, plaintext }, 5 * 60_000, 150, 100);
    }
    await t.state.refresh();

    const pass = await job();
    expect(pass.raised.map((flag) => [flag.partnerId, flag.signal])).toEqual([[partner.id, 'partner ctr']]);
    expect(pass.suspended).toEqual([]);
    const [flag] = pass.raised;
    expect(flag.evidence).toMatchObject({
      impressions: 2_500,
      clicks: 100,
      ratio: 4,
      baselineSource: 'other partners',
      thresholds: { ratio: 3, minClicks: 50, minKeys: 2 },
    });
    expect(
      (flag.evidence['keys'] as Array<{ apiKeyId: number; ratio: number }>).map((key) => key.apiKeyId).sort(),
    ).toEqual(keys.map((key) => key.id).sort());
    expect(flag.evidence['summary']).toMatch(
      /^its 5 keys together: click-through rate 4% is 4× its placements' baseline of 1% \(100 clicks on 2500 impressions\); the most clicked key alone is 4×/,
    );
    // A second pass updates it; the policy never suspends on it.
    await t.admin('PUT', '/flag-policy', { autoSuspend: true, multiplier: 1 });
    now += 30_000;
    const second = await job();
    expect(second.raised).toEqual([]);
    expect(second.suspended).toEqual([]);

    // The operator reads it in the dashboard, with every key, and suspends them all at once.
    const operator = await signedInOperator();
    const queue = await operator.get('/flags');
    expect(queue.body).toContain('Partner click-through rate');
    expect(queue.body).toContain('Spread Over Keys');
    expect(queue.body).toContain('Suspend its 5 keys');
    for (const key of keys) {
      const prefix = (await t.admin('GET', `/keys/${key.id}`)).json().data.prefix as string;
      expect(queue.body).toContain(`<code>${prefix}…</code>`);
    }
    expect((await operator.submit('/flags', `/flags/${flag.id}/suspend`, { reason: '' })).status).toBe(303);
    for (const key of keys)
      expect((await t.admin('GET', `/keys/${key.id}`)).json().data.status).toBe('suspended');
    expect((await t.admin('GET', `/keys/${honestAt3.id}`)).json().data.status).toBe('active');
  });

  it('flags the partners a click farm spread over, by the end-user addresses they share, and never a partner behind a carrier NAT address', async () => {
    // Three partners with a key each: 2,000 displays of their own users in the last 3 minutes, 1%
    // clicked, each from an address of its own.
    const farmed = [await newKey('Farmed A'), await newKey('Farmed B'), await newKey('Farmed C')];
    const events: TrackedEvent[] = [];
    const at = (i: number) => now - 180_000 + i * 90;
    for (const [n, key] of farmed.entries()) {
      for (let i = 0; i < 2_000; i++) {
        const address = `10.${n}.${i % 250}.0`;
        events.push(stored(key, 'impression', at(i), null, address));
        if (i % 100 === 50) events.push(stored(key, 'click', at(i) + 1_000, null, address));
      }
    }
    // A carrier's NAT address that these three and five other partners' users share: 600 displays
    // each, 1.5% clicked (72 clicks on 4,800 displays: 1.5×).
    const carrier = [];
    for (let n = 0; n < 5; n++) carrier.push(await newKey(`Behind the NAT ${n + 1}`));
    for (const key of [...farmed, ...carrier]) {
      for (let i = 0; i < 600; i++) {
        events.push(stored(key, 'impression', at(i * 3), null, '100.64.7.0'));
        if (i % 200 === 7 || i % 200 === 107 || i % 200 === 157)
          events.push(stored(key, 'click', at(i * 3) + 1_000, null, '100.64.7.0'));
      }
    }
    await storeDirectly(events);
    // A click farm browsing the three partners' sites from two /24s, through the partner API with
    // the end users forwarded: from each, 60 displays per partner, one in three clicked.
    for (const prefix of ['203.0.113', '198.51.100']) {
      for (const key of farmed) {
        for (let i = 1; i <= 60; i++) {
          const user = {
            userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0',
            userIp: `${prefix}.${i}`,
          };
          await track(key, 'impression', user);
          if (i % 3 === 0) await track(key, 'click', user);
          now += 250;
        }
      }
    }

    const pass = await job();
    // Each key alone: 69 clicks on 2,720 impressions (2.5%), under the key threshold of 5×.
    expect(pass.raised.map((flag) => [flag.partnerId, flag.apiKeyId, flag.signal])).toEqual(
      farmed.map((key) => [key.partnerId, key.id, 'shared addresses']),
    );
    expect(pass.suspended).toEqual([]);
    for (const key of carrier) expect(await flagsOf(key)).toEqual([]);
    const [flag] = await flagsOf(farmed[1]);
    expect(flag).toMatchObject({ signal: 'shared addresses', status: 'open' });
    expect(flag.summary).toBe(
      "40 clicks on 120 impressions (22.2× its placements' baseline) came from 2 end-user addresses (198.51.100.0, 203.0.113.0) clicked through 3 partners and 3 keys: click-through rate 33.33% there is 22.2× the baseline of 1.5% (120 clicks on 360 impressions)",
    );
    expect(flag.evidence).toMatchObject({
      addressCount: 2,
      partners: 3,
      allKeys: 3,
      keys: [{ apiKeyId: farmed[1].id, impressions: 120, clicks: 40 }],
      partner: { impressions: 120, clicks: 40 },
      // The median of the 9 partners' own rates: the five behind the NAT are at 1.5%.
      baselineCtr: 0.015,
      baselineRate: 'median of partners',
      thresholds: { ratio: 3, minClicks: 50, minKeys: 2, partnerRatio: 3, minPartnerClicks: 5 },
    });
    expect(flag.evidence['addresses']).toEqual([
      expect.objectContaining({
        address: '198.51.100.0',
        partners: 3,
        keys: 3,
        impressions: 180,
        clicks: 60,
      }),
      expect.objectContaining({ address: '203.0.113.0', partners: 3, keys: 3, impressions: 180, clicks: 60 }),
    ]);

    // The operator reads the addresses on the Flags page, and suspending the flag suspends the
    // partner's keys it names.
    const operator = await signedInOperator();
    const queue = await operator.get('/flags');
    expect(queue.body).toContain('Shared end-user addresses');
    expect(queue.body).toContain(
      '<code>203.0.113.0</code>: 60 clicks on 180 impressions (33.33%, 22.222× the',
    );
    expect(queue.body).not.toContain('100.64.7.0');
    // One key of the partner's clicked from the addresses: its button says so, and begins its name.
    expect(queue.body).toContain(
      `aria-label="Suspend its key: flag ${flag.id} of Farmed B">Suspend its key</button>`,
    );
    expect((await operator.submit('/flags', `/flags/${flag.id}/suspend`, { reason: '' })).status).toBe(303);
    expect((await t.admin('GET', `/keys/${farmed[1].id}`)).json().data.status).toBe('suspended');
    expect((await t.admin('GET', `/keys/${farmed[0].id}`)).json().data.status).toBe('active');
  });

  it('judges a key too slow for the window on its day: a slow polling loop and a slow 20× key, never a slow honest key', async () => {
    // Three hours each, up to now. In the 5-minute window the loop's 150 impressions predict about
    // 2 clicks (its placements' baseline is about 1.4%) and the 20× key has 3 clicks: both under
    // the window's minimum volumes.
    const loop = await newKey('Slow Polling Loop');
    const twenty = await newKey('Slow Twenty Times');
    const honestKey = await newKey('Slow Honest Partner');
    await lastHours(loop, 3 * HOUR, 2_000, 0); // 5,400 impressions, no click
    await lastHours(twenty, 3 * HOUR, 20_000, 5); // 540 impressions, 20% clicked
    await lastHours(honestKey, 3 * HOUR, 2_000, 100); // 5,400 impressions, 1% clicked
    const pass = await job();
    expect(pass.raised.map((flag) => [flag.apiKeyId, flag.signal]).sort()).toEqual(
      [
        [loop.id, 'ctr'],
        [twenty.id, 'ctr'],
      ].sort(),
    );
    const theDay = {
      span: 'day',
      windowStart: new Date(now - 24 * HOUR).toISOString(),
      windowEnd: new Date(now).toISOString(),
      baselineSource: 'other partners',
    };
    const [looping] = await flagsOf(loop);
    expect(looping.evidence).toMatchObject({ ...theDay, direction: 'below', impressions: 5_400, clicks: 0 });
    expect(looping.evidence['expectedClicks']).toBeGreaterThanOrEqual(50);
    // Its baseline holds neither the 20× key, found out in the same pass, nor the loop: the honest
    // key's and the baseline partner's, most of it the latter's, which the summary says.
    expect(looping.summary).toMatch(
      /^click-through rate 0% is [\d.]+× below its placements' baseline of [\d.]+%: 5400 impressions, 0 clicks where \d+ were expected; [\d.]+% of that baseline is one key's \(\d+\), so it is not suspended by the policy, over its traffic since 2026-05-31 12:00 UTC$/,
    );
    const [clicked] = await flagsOf(twenty);
    expect(clicked.evidence).toMatchObject({ ...theDay, direction: 'above', impressions: 540, clicks: 108 });
    expect(clicked.evidence['ratio']).toBeGreaterThanOrEqual(20);
    expect(await flagsOf(honestKey)).toEqual([]);
    // The dashboard's queue names the day, not the 5 minutes of a window's flag.
    const operator = await signedInOperator();
    const queue = await operator.get('/flags');
    expect(queue.body).toContain(
      // Pooled: the 20× key and the loop left it, so two partners remain, too few for a median.
      'Over its day, to 2026-06-01 12:00 UTC, against the other partners of the same hours.',
    );
    expect(queue.body).not.toContain('Over the 5 minutes');
  });

  it('flags an impression polling loop and a click flood as bursts, with the busiest 10 seconds', async () => {
    const loop = await newKey('Polling Loop');
    await send(loop, 'impression', 120, 1_000); // one a second for two minutes
    await send(loop, 'impression', 300, 20); // then 300 in 6 seconds
    const flood = await newKey('Click Flood');
    await honest(flood, 60, 1_000, 10);
    await send(flood, 'click', 100, 50);
    await job();
    const [burst] = await flagsOf(loop);
    expect(burst).toMatchObject({ signal: 'burst', status: 'open' });
    expect(burst.evidence).toMatchObject({ kind: 'impression', medianEvents: 10, sliceSeconds: 10 });
    expect(burst.evidence['peakEvents']).toBeGreaterThanOrEqual(250);
    expect(burst.summary).toMatch(/^\d+ impressions in the 10 seconds from \d\d:\d\d:\d\d UTC/);
    const signals = (await flagsOf(flood)).map((flag) => flag.signal).sort();
    expect(signals).toEqual(['burst', 'clicks without impressions', 'ctr']);
    const floodBurst = (await flagsOf(flood)).find((flag) => flag.signal === 'burst')!;
    expect(floodBurst.evidence).toMatchObject({ kind: 'click', medianEvents: 1 });
  });

  it('flags a key whose clicks come without impressions, by reason', async () => {
    const key = await newKey();
    await send(key, 'click', 30, 4_000);
    await job();
    const flags = await flagsOf(key);
    expect(flags.map((flag) => flag.signal)).toEqual(['clicks without impressions']);
    expect(flags[0].evidence).toMatchObject({
      clicks: 30,
      unpairedClicks: 30,
      share: 1,
      reasons: { 'click without impression': 30 },
      thresholds: { share: 0.2, minClicks: 20 },
    });
    expect(flags[0].summary).toBe('30 of its 30 clicks (100%) had no impression to go with them');
  });

  it('keeps one open flag per key and signal, updating its evidence; a dismissed one stays quiet for a day', async () => {
    const key = await newKey();
    await send(key, 'click', 25, 4_000);
    await job();
    now += 30_000;
    await send(key, 'click', 10, 1_000);
    const second = await job();
    expect(second.raised).toEqual([]);
    expect(second.updated).toBe(1);
    const [flag, ...others] = await flagsOf(key);
    expect(others).toEqual([]);
    expect(flag.evidence['clicks']).toBe(35);

    const dismissed = await t.admin('POST', `/flags/${flag.id}/dismiss`, {
      note: 'a test campaign of theirs',
    });
    expect(dismissed.statusCode).toBe(200);
    expect(dismissed.json().data).toMatchObject({
      status: 'dismissed',
      reviewNote: 'a test campaign of theirs',
    });
    expect(dismissed.json().data.reviewedBy).toMatch(/^admin:\d+$/);
    expect((await t.admin('POST', `/flags/${flag.id}/dismiss`, { note: 'again' })).statusCode).toBe(409);
    expect((await t.admin('POST', `/flags/${flag.id}/suspend`, {})).statusCode).toBe(409);
    now += 30_000;
    await send(key, 'click', 10, 1_000);
    expect((await job()).raised).toEqual([]);
    expect(await flagsOf(key, 'open')).toEqual([]);
    now += 24 * HOUR;
    await send(key, 'click', 25, 1_000);
    expect((await job()).raised.map((raised) => raised.signal)).toEqual(['clicks without impressions']);

    const audit = await t.admin('GET', `/audit?objectType=key_flag&objectId=${flag.id}`);
    expect(audit.json().data).toMatchObject([
      {
        action: 'dismiss',
        reason: 'a test campaign of theirs',
        before: { status: 'open' },
        after: { status: 'dismissed' },
      },
    ]);
    expect(audit.json().data[0].actor).toMatch(/^admin:\d+$/);
  });

  it('suspends a flagged key through the API: it gets 403, and both changes are audited with the actor', async () => {
    const key = await newKey();
    await send(key, 'click', 25, 4_000);
    await job();
    const [flag] = await flagsOf(key);
    expect((await t.admin('POST', `/flags/${flag.id}/dismiss`, {})).statusCode).toBe(400); // a note is required
    const suspended = await t.admin('POST', `/flags/${flag.id}/suspend`, {});
    expect(suspended.statusCode).toBe(200);
    expect(suspended.json().data).toMatchObject({ status: 'suspended' });
    const apiKey = (await t.admin('GET', `/keys/${key.id}`)).json().data;
    expect(apiKey).toMatchObject({ status: 'suspended', suspendedReason: `flagged: ${flag.summary}` });
    await t.state.refresh();
    const fetched = await t.fetch('placement=header_banner', key.plaintext);
    expect(fetched.statusCode).toBe(403);
    expect(fetched.json().message).toBe('api key suspended');
    const keyAudit = (
      await t.admin('GET', `/audit?objectType=api_key&objectId=${key.id}&order=newest`)
    ).json().data[0];
    expect(keyAudit).toMatchObject({ action: 'suspend', reason: `flagged: ${flag.summary}` });
    expect(keyAudit.actor).toMatch(/^admin:\d+$/);
    const flagAudit = (await t.admin('GET', `/audit?objectType=key_flag&objectId=${flag.id}`)).json().data;
    expect(flagAudit).toMatchObject([{ action: 'suspend', actor: keyAudit.actor }]);
  });

  it('suspends by itself only once the operator turns the policy on, as system, audited', async () => {
    const policy = await t.admin('GET', '/flag-policy');
    expect(policy.json().data).toEqual({
      autoSuspend: false,
      signals: ['ctr', 'burst', 'clicks without impressions'],
      multiplier: 2,
    });
    const first = await newKey();
    await send(first, 'click', 25, 4_000);
    await job();
    expect((await t.admin('GET', `/keys/${first.id}`)).json().data.status).toBe('active');

    expect((await t.admin('PUT', '/flag-policy', { autoSuspend: 'yes' })).statusCode).toBe(400);
    const on = await t.admin('PUT', '/flag-policy', {
      autoSuspend: true,
      signals: ['clicks without impressions'],
    });
    expect(on.statusCode).toBe(200);
    expect(on.json().data).toEqual({
      autoSuspend: true,
      signals: ['clicks without impressions'],
      multiplier: 2,
    });
    const changed = (await t.admin('GET', '/audit?objectType=flag_policy&order=newest')).json().data[0];
    // The first key stops misbehaving: it leaves the window, and its open flag waits for a review.
    now += 6 * 60_000;
    expect(changed).toMatchObject({
      action: 'update',
      before: { autoSuspend: false },
      after: { autoSuspend: true },
    });
    expect(changed.actor).toMatch(/^admin:\d+$/);

    const second = await newKey();
    await send(second, 'click', 25, 4_000);
    const pass = await job();
    expect(pass.suspended).toEqual([second.id]);
    const [flag] = await flagsOf(second);
    expect(flag).toMatchObject({ status: 'suspended', reviewedBy: 'system' });
    const apiKey = (await t.admin('GET', `/keys/${second.id}`)).json().data;
    expect(apiKey.status).toBe('suspended');
    expect(apiKey.suspendedReason).toMatch(new RegExp(`^automatic \\(flag policy\\): flag ${flag.id}, `));
    const keyAudit = (
      await t.admin('GET', `/audit?objectType=api_key&objectId=${second.id}&order=newest`)
    ).json().data[0];
    expect(keyAudit).toMatchObject({ actor: 'system', action: 'suspend' });
    expect(await flagsOf(first, 'open')).toHaveLength(1);
    expect((await t.admin('GET', `/keys/${first.id}`)).json().data.status).toBe('active');
  });

  it('shows a partner its own flags only, and lets only the operator act on them', async () => {
    const mine = await newKey('Mine');
    const theirs = await newKey('Theirs');
    await send(mine, 'click', 25, 2_000);
    await send(theirs, 'click', 25, 2_000);
    await job();
    const [myFlag] = await flagsOf(mine);
    const [theirFlag] = await flagsOf(theirs);
    const token = async (account: string, role = 'admin') =>
      (await t.services.tokens.create({ label: account, account, role })).plaintext;
    const partner = await token(`partner:${mine.partnerId}`);
    const listed = (await t.admin('GET', '/flags', undefined, partner)).json().data as Flag[];
    expect(listed.map((flag) => flag.id)).toEqual([myFlag.id]);
    expect((await t.admin('GET', `/flags/${myFlag.id}`, undefined, partner)).statusCode).toBe(200);
    expect((await t.admin('GET', `/flags/${theirFlag.id}`, undefined, partner)).statusCode).toBe(404);
    expect((await t.admin('POST', `/flags/${myFlag.id}/dismiss`, { note: 'x' }, partner)).statusCode).toBe(
      403,
    );
    expect((await t.admin('POST', `/flags/${myFlag.id}/suspend`, {}, partner)).statusCode).toBe(403);
    expect((await t.admin('GET', '/flag-policy', undefined, partner)).statusCode).toBe(403);
    const advertiser = await token(`advertiser:${(await t.campaigns.get(campaignId)).advertiserId}`);
    expect((await t.admin('GET', '/flags', undefined, advertiser)).json().data).toEqual([]);
    const reporter = await token('operator', 'reporter');
    expect((await t.admin('GET', '/flags', undefined, reporter)).statusCode).toBe(200);
    expect((await t.admin('POST', `/flags/${myFlag.id}/dismiss`, { note: 'x' }, reporter)).statusCode).toBe(
      403,
    );
  });

  it('shows the operator the queue with dismiss and suspend forms, and a partner its flags and invalid share', async () => {
    const key = await newKey('Dashboard Partner');
    await send(key, 'click', 25, 2_000);
    await job();
    const [flag] = await flagsOf(key);
    const operator = await signedInOperator('manager');
    const queue = await operator.get('/flags');
    expect(queue.status).toBe(200);
    expect(queue.body).toContain('25 of its 25 clicks (100%) had no impression to go with them');
    expect(queue.body).toContain('Dashboard Partner');
    expect(queue.body).toContain(`action="/flags/${flag.id}/dismiss"`);
    expect(queue.body).toContain(`action="/flags/${flag.id}/suspend"`);

    const partner = await signedInPerson(t, now, {
      email: 'partner@example.com',
      account: `partner:${key.partnerId}`,
      role: 'admin',
    });
    const own = await partner.get('/flags');
    expect(own.status).toBe(200);
    expect(own.body).toContain('25 of its 25 clicks (100%) had no impression to go with them');
    expect(own.body).not.toContain('action="/flags/');
    expect(own.body).toContain('click without impression');
    expect(own.body).toContain('href="/reports?window=day&amp;breakdown=reason"');
    expect((await partner.submit('/flags', `/flags/${flag.id}/dismiss`, { note: 'mine' })).status).toBe(403);

    const suspended = await operator.submit('/flags', `/flags/${flag.id}/suspend`, { reason: '' });
    expect(suspended.status).toBe(303);
    const after = await operator.get('/flags');
    expect(after.body).toContain('No open flags');
    expect((await t.admin('GET', `/keys/${key.id}`)).json().data.status).toBe('suspended');

    const advertiser = await signedInPerson(t, now, {
      email: 'ads@example.com',
      account: `advertiser:${(await t.campaigns.get(campaignId)).advertiserId}`,
      role: 'admin',
    });
    expect((await advertiser.get('/flags')).status).toBe(403);
  });
});
