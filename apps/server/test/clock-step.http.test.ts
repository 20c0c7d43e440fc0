import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { PERSON_PASSWORD, signedInPerson } from './helpers/people.js';

const TEN_MINUTES = 10 * 60_000;
const WRONG_TOKEN = `pla_${'x'.repeat(40)}`;

/**
 * The wall clock stepped back (by an operator or NTP) while the limits keep time on a monotonic
 * clock: each moves on its own here, as they do in the product.
 */
describe.each(ENGINES)('limits when the wall clock steps back on %s', (engine) => {
  let t: TestApp;
  let wall: number;
  let monotonic: number;
  beforeEach(async () => {
    wall = Date.parse('2026-06-01T12:00:00Z');
    monotonic = 1_000_000;
    t = await createTestApp({ engine, clock: () => wall, monotonic: () => monotonic });
  });
  afterEach(() => t.close());

  it('refills a key’s bucket as the monotonic clock moves, not refusing every request for the step', async () => {
    await t.partners.setKeyLimits(t.apiKeyId, { fetchRate: 1, fetchBurst: 2 });
    await t.state.refresh();
    const fetchOnce = async () => (await t.fetch('placement=header_banner')).statusCode;
    expect([await fetchOnce(), await fetchOnce(), await fetchOnce()]).toEqual([200, 200, 429]);
    wall -= TEN_MINUTES;
    monotonic += 1_000;
    expect([await fetchOnce(), await fetchOnce()]).toEqual([200, 429]);
  });

  it('lets a person sign in right after the wall clock stepped back', async () => {
    await signedInPerson(t, wall, { email: 'steps@example.com', account: 'operator', role: 'admin' });
    const signIn = async (password: string) => {
      const browser = new BrowserClient(t.url);
      return (await browser.submit('/sign-in', '/sign-in', { email: 'steps@example.com', password })).status;
    };
    expect(await signIn('not-the-password')).toBe(401);
    wall -= TEN_MINUTES;
    expect(await signIn(PERSON_PASSWORD)).toBe(303);
  });

  it('answers a wrong admin token 401, not 429, after the wall clock stepped back', async () => {
    const wrong = () => t.admin('GET', '/partners', undefined, WRONG_TOKEN);
    expect((await wrong()).statusCode).toBe(401);
    wall -= TEN_MINUTES;
    const after = await wrong();
    expect(after.headers['retry-after']).toBeUndefined();
    expect(after.statusCode).toBe(401);
  });
});
