import { beforeEach, describe, expect, it } from 'vitest';
import { campaign, withWrongLastCharacter } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';
import { eachTestFrozenApp } from './helpers/frozen-app.js';

describe.each(ENGINES)('rate limits per key and operation class (D7) on %s', (engine) => {
  // A frozen clock: buckets refill only when the test moves time.
  const t = eachTestFrozenApp(engine, '2026-11-22T12:00:00Z');
  let campaignId: number;
  beforeEach(async () => {
    [campaignId] = await t.addCampaigns([campaign()]);
  });

  const fetchOnce = () => t.fetch('placement=header_banner');
  const impression = () => t.track('impression', { campaignId, placement: 'header_banner' });

  async function limitKey(limits: Record<string, number>): Promise<void> {
    await t.partners.setKeyLimits(t.apiKeyId, limits);
    await t.state.refresh();
  }

  it("answers 429 with the exact body and the draft's headers once a key's burst is spent", async () => {
    await limitKey({ fetchRate: 1, fetchBurst: 3 });
    for (let i = 0; i < 3; i++) expect((await fetchOnce()).statusCode).toBe(200);
    const refused = await fetchOnce();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ status: 'error', message: 'Rate limit exceeded' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"fetch";q=3;w=3');
    expect(refused.headers['ratelimit']).toBe('"fetch";r=0;t=1');
    expect(refused.headers['x-request-id']).toBeTruthy();

    // The other class has its own bucket.
    expect((await impression()).statusCode).toBe(200);
    // A second later one token is back, and only one.
    t.now += 1000;
    expect((await fetchOnce()).statusCode).toBe(200);
    expect((await fetchOnce()).statusCode).toBe(429);
  });

  it('limits events separately from fetches', async () => {
    await limitKey({ eventsRate: 1, eventsBurst: 2 });
    expect((await impression()).statusCode).toBe(200);
    expect((await t.track('click', { campaignId, placement: 'header_banner' })).statusCode).toBe(200);
    const refused = await impression();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe('"events";q=2;w=2');
    expect(refused.headers['ratelimit']).toBe('"events";r=0;t=1');
    expect(await t.store.countEvents()).toBe(2);
    expect((await fetchOnce()).statusCode).toBe(200);
  });

  it('applies the defaults of D7 to a key without its own limits: a burst of 200 fetches', async () => {
    const partner = await t.partners.createPartner('Default Limits');
    const { plaintext } = await t.partners.createKey(partner.id);
    await t.state.refresh();
    const statuses: number[] = [];
    for (let i = 0; i < 201; i++)
      statuses.push((await t.fetch('placement=header_banner', plaintext)).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    expect(statuses[200]).toBe(429);
  });

  it('never spends a real key’s quota on failed authentication', async () => {
    await limitKey({ fetchRate: 1, fetchBurst: 2 });
    for (let i = 0; i < 5; i++) {
      expect((await t.fetch('placement=header_banner', withWrongLastCharacter(t.apiKey))).statusCode).toBe(
        401,
      );
    }
    expect((await fetchOnce()).statusCode).toBe(200);
    expect((await fetchOnce()).statusCode).toBe(200);
    expect((await fetchOnce()).statusCode).toBe(429);
  });
});
