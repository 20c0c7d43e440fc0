import { describe, expect, it } from 'vitest';
import { eachTestWithCampaign, withWrongLastCharacter, type TestApp } from './helpers/app.js';

/** Contract 1.5: the key stays on the partner's server. */
describe('a key used from a browser', () => {
  let t: TestApp;
  let campaignId: number;
  eachTestWithCampaign((ready) => ({ app: t, campaignId } = ready));

  const fetchWith = (headers: Record<string, string>, key = t.apiKey) =>
    t.request({
      method: 'GET',
      url: '/api/v1/campaigns/fetch?placement=header_banner',
      headers: { authorization: `Bearer ${key}`, ...headers },
    });

  it.each([
    ['Origin', { origin: 'https://publisher.example' }],
    [
      'Sec-Fetch-Mode: cors',
      { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty' },
    ],
    [
      'Sec-Fetch-Mode: navigate',
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none', 'sec-fetch-dest': 'document' },
    ],
    ['Sec-Fetch-Mode: no-cors', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }],
  ])('is refused with 403 when the request carries %s, and no CORS headers are sent', async (_, headers) => {
    const res = await fetchWith(headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ status: 'error', message: 'api keys must only be used from a server' });
    expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('refuses tracking too, storing nothing', async () => {
    const res = await t.track(
      'click',
      { campaignId, placement: 'header_banner' },
      { 'sec-fetch-mode': 'cors', origin: 'https://publisher.example' },
    );
    expect(res.statusCode).toBe(403);
    expect(await t.store.countEvents()).toBe(0);
  });

  it('serves server-side requests, including other Sec-Fetch-Mode values, and sends no CORS headers', async () => {
    const plain = await fetchWith({});
    expect(plain.statusCode).toBe(200);
    expect(Object.keys(plain.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    expect(
      (await fetchWith({ 'sec-fetch-mode': 'same-origin', 'sec-fetch-site': 'same-origin' })).statusCode,
    ).toBe(200);
  });

  it("serves Node's own fetch, which sends Sec-Fetch-Mode: cors alone from servers", async () => {
    const res = await fetch(`${t.url}/api/v1/campaigns/fetch?placement=header_banner`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(res.status).toBe(200);
  });

  it('answers an invalid key 401 whatever the signals, so only the key holder learns of the leak', async () => {
    const res = await fetchWith({ origin: 'https://publisher.example' }, withWrongLastCharacter(t.apiKey));
    expect(res.statusCode).toBe(401);
  });

  it('counts refusals per key and shows them to operators', async () => {
    for (let i = 0; i < 3; i++) await fetchWith({ origin: 'https://publisher.example' });
    await t.services.keyUsage.flush();
    const listed = await t.admin('GET', `/keys/${t.apiKeyId}`);
    expect(listed.statusCode).toBe(200);
    const key = (listed.json() as { data: { browserRequests: number; lastBrowserRequestAt: string } }).data;
    expect(key.browserRequests).toBe(3);
    expect(Date.parse(key.lastBrowserRequestAt)).toBeGreaterThan(0);
    // Later refusals add to the count.
    await fetchWith({ 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site' });
    await t.services.keyUsage.flush();
    const again = (await t.admin('GET', `/keys/${t.apiKeyId}`)).json() as {
      data: { browserRequests: number };
    };
    expect(again.data.browserRequests).toBe(4);
  });
});
