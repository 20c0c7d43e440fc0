import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, withWrongLastCharacter, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { PERSON_PASSWORD, signedInPerson } from './helpers/people.js';

const ATTACKER = '203.0.113.7';
const OWNER = '198.51.100.20';
/** What no stored admin token is: well formed, so it counts as a guess. */
const WRONG_TOKEN = `pla_${'x'.repeat(40)}`;

/**
 * The per-client limits on sign-in and failed authentication behind a reverse proxy: the tests'
 * requests come from 127.0.0.1, which plays the load balancer, and `X-Forwarded-For` names the
 * client as HAProxy's `option forwardfor` would.
 */
describe.each(ENGINES)('per-client limits behind a trusted proxy on %s', (engine) => {
  let t: TestApp;
  // A clock that stands still: no bucket refills between requests, however slow the machine.
  const now = Date.parse('2026-06-01T12:00:00Z');
  const clock = () => now;
  afterEach(async () => t?.close());

  /** One sign-in through the proxy on behalf of `client`: the answer's status. */
  async function signIn(client: string, email: string, password: string): Promise<number> {
    const browser = new BrowserClient(t.url);
    const page = await browser.get('/sign-in');
    const answer = await browser.post(
      '/sign-in',
      { _csrf: page.csrf!, email, password },
      { 'x-forwarded-for': client },
    );
    return answer.status;
  }

  /** A person with `PERSON_PASSWORD`, signed out again. */
  async function person(email: string): Promise<void> {
    await signedInPerson(t, now, { email, account: 'operator', role: 'admin' });
  }

  it('does not let junk sign-ins from one client block another', async () => {
    t = await createTestApp({ engine, clock, trustedProxies: ['127.0.0.1'] });
    await person('owner@example.com');
    const junk: number[] = [];
    for (let i = 0; i < 15; i++)
      junk.push(await signIn(ATTACKER, `junk${i}@example.com`, 'guess-guess-guess'));
    expect(junk.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(junk.slice(10)).toEqual(Array(5).fill(429));
    expect(await signIn(OWNER, 'owner@example.com', PERSON_PASSWORD)).toBe(303);
  });

  it('signs the owner in with the right password after an attacker hammered the account', async () => {
    t = await createTestApp({ engine, clock, trustedProxies: ['127.0.0.1'] });
    await person('victim@example.com');
    const guesses: number[] = [];
    for (let i = 0; i < 12; i++)
      guesses.push(await signIn(ATTACKER, 'victim@example.com', `guess-${i}-guess`));
    expect(guesses.slice(0, 5)).toEqual(Array(5).fill(401));
    expect(guesses.slice(5)).toEqual(Array(7).fill(429));
    // The owner, from their own address, with a typo first.
    expect(await signIn(OWNER, 'victim@example.com', 'violet-harbour-lanterm')).toBe(401);
    expect(await signIn(OWNER, 'victim@example.com', PERSON_PASSWORD)).toBe(303);
    // The attacker still waits, even with the right password.
    expect(await signIn(ATTACKER, 'victim@example.com', PERSON_PASSWORD)).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    t = await createTestApp({ engine, clock, trustedProxies: ['192.0.2.1'] });
    const answers: number[] = [];
    // A client naming a new address each time is still one client: its own.
    for (let i = 0; i < 11; i++)
      answers.push(await signIn(`203.0.113.${i}`, `spray${i}@example.com`, 'guess-guess'));
    expect(answers.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(answers[10]).toBe(429);
  });

  it('limits failed API authentication per client behind the proxy too', async () => {
    t = await createTestApp({ engine, clock, trustedProxies: ['127.0.0.1'] });
    const asClient = (client: string, path: string, authorization: string) =>
      t.request({ method: 'GET', url: path, headers: { authorization, 'x-forwarded-for': client } });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++)
      statuses.push((await asClient(ATTACKER, '/admin/v1/partners', `Bearer ${WRONG_TOKEN}`)).statusCode);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(5).fill(429));
    // Another client's typo is still a 401, on the management API and the partner API alike.
    expect((await asClient(OWNER, '/admin/v1/partners', `Bearer ${WRONG_TOKEN}`)).statusCode).toBe(401);
    const wrongKey = `Bearer ${withWrongLastCharacter(t.apiKey)}`;
    expect(
      (await asClient(OWNER, '/api/v1/campaigns/fetch?placement=header_banner', wrongKey)).statusCode,
    ).toBe(401);
    expect(
      (await asClient(ATTACKER, '/api/v1/campaigns/fetch?placement=header_banner', wrongKey)).statusCode,
    ).toBe(429);
  });
});
