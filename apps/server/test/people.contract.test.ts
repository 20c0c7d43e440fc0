import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../src/services/audit.js';
import {
  actorOf,
  INVALID_LINK,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  Sessions,
} from '../src/services/sessions.js';
import { LINK_LIFETIME_MS, UserService } from '../src/services/users.js';
import type { Store } from '../src/store/store.js';
import { createDatabase, ENGINES, type TestDatabase } from './helpers/engines.js';

const PASSWORD = 'violet-harbour-lantern';
const secretOf = (url: string) => url.split('/link/')[1];

/** Users, one-time links, sign-in and sessions (D13), on each engine. */
describe.each(ENGINES)('people on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let now = Date.parse('2026-06-01T12:00:00Z');
  const clock = () => now;
  let sessions: Sessions;
  const users = (actor?: Actor) => new UserService(store, actor, 'https://ads.example', clock);

  beforeAll(async () => {
    database = await createDatabase(engine);
    store = await database.open();
    sessions = new Sessions(store, clock);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  /** A user who accepted their invitation, and their session secret. */
  async function activeUser(email: string, account: string, role = 'admin', by?: Actor) {
    const { user, link } = await users(by).create({ email, account, role });
    const { secret } = await sessions.useLink(secretOf(link.url), PASSWORD);
    return { user, secret };
  }

  it('creates a user with a one-time invitation link that sets the password and signs in', async () => {
    const { user, link } = await users().create({
      email: ' Ops@Example.com ',
      account: 'operator',
      role: 'admin',
    });
    expect(user.email).toBe('ops@example.com');
    expect(link.url).toMatch(/^https:\/\/ads\.example\/link\/[0-9A-Za-z]{43}$/);
    expect(link.expiresAt).toBe(now + LINK_LIFETIME_MS);
    const { secret } = await sessions.useLink(secretOf(link.url), PASSWORD);
    const signedIn = await sessions.authenticate(secret);
    expect(signedIn?.user.email).toBe('ops@example.com');
    expect(signedIn?.actor).toEqual({ id: `user:${user.id}`, account: { kind: 'operator' }, role: 'admin' });
    await expect(sessions.useLink(secretOf(link.url), PASSWORD)).rejects.toThrow(INVALID_LINK);
  });

  it('refuses a weak password through the link and leaves the link usable', async () => {
    const { link } = await users().create({
      email: 'weak@example.com',
      account: 'operator',
      role: 'reporter',
    });
    await expect(sessions.useLink(secretOf(link.url), 'password1234')).rejects.toThrow('commonly used');
    await expect(sessions.useLink(secretOf(link.url), PASSWORD)).resolves.toBeDefined();
  });

  it('lets a link expire after 72 hours and voids it when a newer one is made', async () => {
    const { user, link } = await users().create({
      email: 'late@example.com',
      account: 'operator',
      role: 'manager',
    });
    const newer = await users().invite(user.id);
    await expect(sessions.useLink(secretOf(link.url), PASSWORD)).rejects.toThrow(INVALID_LINK);
    now += LINK_LIFETIME_MS;
    await expect(sessions.describeLink(secretOf(newer.url))).rejects.toThrow(INVALID_LINK);
  });

  it('answers an unknown address, a wrong password and a disabled user the same way', async () => {
    await activeUser('signin@example.com', 'operator');
    const right = await sessions.signIn('SIGNIN@example.com', PASSWORD, '192.0.2.1');
    expect(right.ok).toBe(true);
    const wrong = await sessions.signIn('signin@example.com', 'not-the-password', '192.0.2.2');
    const unknown = await sessions.signIn('nobody@example.com', PASSWORD, '192.0.2.3');
    expect(wrong).toEqual({ ok: false, problem: 'wrong' });
    expect(unknown).toEqual(wrong);
    await users().disable('signin@example.com');
    expect(await sessions.signIn('signin@example.com', PASSWORD, '192.0.2.4')).toEqual(wrong);
  });

  it('slows guesses at an account per client address, never the owner from another address', async () => {
    await activeUser('target@example.com', 'operator');
    for (let i = 0; i < 5; i++)
      expect(await sessions.signIn('target@example.com', 'guess-guess-guess', '198.51.100.1')).toEqual({
        ok: false,
        problem: 'wrong',
      });
    const sixth = await sessions.signIn('target@example.com', PASSWORD, '198.51.100.1');
    expect(sixth).toEqual({ ok: false, problem: 'throttled', retryAfterSeconds: 30 });
    // Five guesses from each of other addresses do not lock the owner out either.
    for (let i = 2; i < 6; i++)
      for (let j = 0; j < 5; j++) await sessions.signIn('target@example.com', 'guess', `198.51.100.${i}`);
    expect((await sessions.signIn('target@example.com', PASSWORD, '192.0.2.50')).ok).toBe(true);
    for (let i = 0; i < 10; i++)
      await sessions.signIn(`spray${i}@example.com`, 'guess-guess-guess', '203.0.113.7');
    const eleventh = await sessions.signIn('spray-new@example.com', 'guess-guess-guess', '203.0.113.7');
    expect(eleventh).toMatchObject({ ok: false, problem: 'throttled' });
  });

  it('makes each further failure from one client wait twice as long, up to 15 minutes', async () => {
    let tick = 0;
    const timed = new Sessions(store, clock, () => tick);
    await activeUser('slow@example.com', 'operator');
    const guess = () => timed.signIn('slow@example.com', 'guess-guess-guess', '198.51.100.9');
    for (let i = 0; i < 5; i++) await guess();
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const refused = await guess();
      if (refused.ok || refused.problem !== 'throttled') throw new Error('not throttled');
      waits.push(refused.retryAfterSeconds);
      tick += refused.retryAfterSeconds * 1000;
      expect(await guess()).toEqual({ ok: false, problem: 'wrong' });
    }
    expect(waits).toEqual([30, 60, 120, 240, 480, 900, 900, 900]);
    // The right password from there after the wait starts the count again.
    tick += 900_000;
    expect((await timed.signIn('slow@example.com', PASSWORD, '198.51.100.9')).ok).toBe(true);
    expect(await guess()).toEqual({ ok: false, problem: 'wrong' });
  });

  it('ends a session after an hour idle, after 12 hours in any case, and at sign-out', async () => {
    const { secret } = await activeUser('idle@example.com', 'operator');
    now += SESSION_IDLE_MS - 1_000;
    expect(await sessions.authenticate(secret)).toBeDefined();
    now += SESSION_IDLE_MS - 1_000;
    expect(await sessions.authenticate(secret)).toBeDefined(); // each request moves the idle end
    now += SESSION_IDLE_MS;
    expect(await sessions.authenticate(secret)).toBeUndefined();

    const signIn = await sessions.signIn('idle@example.com', PASSWORD, '192.0.2.10');
    if (!signIn.ok) throw new Error('sign-in failed');
    const signedInAt = now;
    // A request every 40 minutes keeps it from idling out, until 12 hours after sign-in.
    while (now + 40 * 60_000 < signedInAt + SESSION_ABSOLUTE_MS) {
      now += 40 * 60_000;
      expect(
        await sessions.authenticate(signIn.secret),
        `after ${(now - signedInAt) / 3_600_000} h`,
      ).toBeDefined();
    }
    now = signedInAt + SESSION_ABSOLUTE_MS;
    expect(await sessions.authenticate(signIn.secret)).toBeUndefined();

    const again = await sessions.signIn('idle@example.com', PASSWORD, '192.0.2.11');
    if (!again.ok) throw new Error('sign-in failed');
    await sessions.signOut(again.secret);
    expect(await sessions.authenticate(again.secret)).toBeUndefined();
  });

  it('ends every session of a user who is disabled or whose password is reset', async () => {
    const { user, secret } = await activeUser('reset@example.com', 'operator');
    const reset = await users().reset(user.id);
    expect(await sessions.authenticate(secret)).toBeDefined();
    await sessions.useLink(secretOf(reset.url), 'a-brand-new-passphrase');
    expect(await sessions.authenticate(secret)).toBeUndefined();
    expect((await sessions.signIn('reset@example.com', 'a-brand-new-passphrase', '192.0.2.20')).ok).toBe(
      true,
    );
  });

  it('scopes users to their account: a foreign user or account reads as missing', async () => {
    const ours = await store.createAdvertiser('Ours Ltd', now);
    const theirs = await store.createAdvertiser('Theirs Ltd', now);
    const { user: admin } = await activeUser('admin@ours.example', `advertiser:${ours.id}`);
    const ourAdmin = actorOf(admin);
    const { user: foreign } = await users().create({
      email: 'x@theirs.example',
      account: `advertiser:${theirs.id}`,
      role: 'admin',
    });

    const colleague = await users(ourAdmin).create({
      email: 'colleague@ours.example',
      account: `advertiser:${ours.id}`,
      role: 'reporter',
    });
    expect(colleague.user.account).toEqual({ kind: 'advertiser', id: ours.id });
    expect((await users(ourAdmin).list()).map((u) => u.email).sort()).toEqual([
      'admin@ours.example',
      'colleague@ours.example',
    ]);
    await expect(users(ourAdmin).get(foreign.id)).rejects.toThrow(`user "${foreign.id}" not found`);
    await expect(users(ourAdmin).reset(foreign.id)).rejects.toThrow('not found');
    await expect(
      users(ourAdmin).create({
        email: 'y@theirs.example',
        account: `advertiser:${theirs.id}`,
        role: 'admin',
      }),
    ).rejects.toThrow(`advertiser "${theirs.id}" not found`);
    await expect(
      users(ourAdmin).create({ email: 'y@ops.example', account: 'operator', role: 'admin' }),
    ).rejects.toThrow('not found');

    const reporter = actorOf(colleague.user);
    await expect(users(reporter).reset(admin.id)).rejects.toThrow(
      'only an admin of the account may manage its users',
    );
  });

  it('names the user behind every change in the audit log', async () => {
    const { user } = await activeUser('auditor@example.com', 'operator');
    await users(actorOf(user)).create({
      email: 'audited@example.com',
      account: 'operator',
      role: 'reporter',
    });
    const entries = await store.listAudit({ objectType: 'user' });
    expect(entries.some((e) => e.actor === `user:${user.id}` && e.action === 'create')).toBe(true);
  });
});
