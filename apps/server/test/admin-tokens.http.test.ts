import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateAdminToken } from '../src/domain/api-keys.js';
import { startTokenNotices } from '../src/services/admin-tokens.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const HOUR = 3_600_000;

describe.each(ENGINES)('admin tokens on %s', (engine) => {
  let t: TestApp;
  let now: number;
  beforeEach(async () => {
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
  });
  afterEach(() => t.close());

  /** A management call with a given token rather than the test's own. */
  const as = (token: string, method: string, path: string) => t.admin(method, path, undefined, token);
  const ownId = async () =>
    ((await t.admin('GET', '/tokens')).json().data as Array<{ id: number; label: string }>).find(
      (token) => token.label === 'tests',
    )!.id;
  const tokenAudit = async (id: number) =>
    (
      (await t.admin('GET', `/audit?objectType=admin_token&objectId=${id}`)).json().data as Array<{
        actor: string;
        action: string;
      }>
    ).map((entry) => `${entry.actor} ${entry.action}`);

  it('creates a labelled token shown once, lists it by prefix with its last use, and audits who made it', async () => {
    const me = await ownId();
    const created = await t.admin('POST', '/tokens', { label: 'ci deploys', expiresInHours: 48 });
    expect(created.statusCode).toBe(201);
    const { token, ...shown } = created.json().data;
    expect(token).toMatch(/^pla_[0-9A-Za-z]{40}$/);
    expect(shown).toEqual({
      id: expect.any(Number),
      label: 'ci deploys',
      prefix: token.slice(0, 10),
      account: 'operator',
      role: 'admin',
      status: 'active',
      createdAt: new Date(now).toISOString(),
      lastUsedAt: null,
      expiresAt: new Date(now + 48 * HOUR).toISOString(),
      revokedAt: null,
    });

    now += 5 * 60_000;
    expect((await as(token, 'GET', '/partners')).statusCode).toBe(200);
    const listed = await t.admin('GET', '/tokens');
    expect(listed.body).not.toContain(token);
    expect(listed.body).not.toMatch(/[0-9a-f]{64}/);
    expect(listed.json().data.find((item: { id: number }) => item.id === shown.id)).toEqual({
      ...shown,
      lastUsedAt: new Date(now).toISOString(),
    });
    // Written at most once a minute: a use 30 s later leaves it as it was.
    const firstUse = now;
    now += 30_000;
    expect((await as(token, 'GET', '/partners')).statusCode).toBe(200);
    expect((await t.admin('GET', `/tokens/${shown.id}`)).json().data.lastUsedAt).toBe(
      new Date(firstUse).toISOString(),
    );
    expect(await tokenAudit(shown.id)).toEqual([`admin:${me} create`]);
  });

  it('refuses an expired token at once and lists it as expired', async () => {
    const { token, id } = (await t.admin('POST', '/tokens', { label: 'short', expiresInHours: 1 })).json()
      .data;
    expect((await as(token, 'GET', '/partners')).statusCode).toBe(200);
    now += HOUR;
    const refused = await as(token, 'GET', '/partners');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ status: 'error', code: 'unauthorized', message: 'unauthorized' });
    expect((await t.admin('GET', `/tokens/${id}`)).json().data.status).toBe('expired');
  });

  it('revokes a token: the next request with it gets 401, and the revocation is audited', async () => {
    const me = await ownId();
    const { token, id } = (await t.admin('POST', '/tokens', { label: 'laptop' })).json().data;
    expect((await as(token, 'GET', '/partners')).statusCode).toBe(200);
    const revoked = await t.admin('POST', `/tokens/${id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().data).toMatchObject({ status: 'revoked', revokedAt: new Date(now).toISOString() });
    expect((await as(token, 'GET', '/partners')).statusCode).toBe(401);
    expect(await tokenAudit(id)).toEqual([`admin:${me} create`, `admin:${me} revoke`]);
    const again = await t.admin('POST', `/tokens/${id}/revoke`);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(`admin token ${id} is already revoked`);
    expect((await t.admin('POST', '/tokens/999999/revoke')).statusCode).toBe(404);
  });

  it('never revokes the last active token, but lets a token revoke itself when another remains', async () => {
    const me = await ownId();
    const last = await t.admin('POST', `/tokens/${me}/revoke`);
    expect(last.statusCode).toBe(409);
    expect(last.json().message).toBe('cannot revoke the last active admin token: create another one first');
    // An expired token is no way in: it does not count.
    await t.admin('POST', '/tokens', { label: 'expiring', expiresInHours: 1 });
    now += HOUR;
    expect((await t.admin('POST', `/tokens/${me}/revoke`)).statusCode).toBe(409);

    const { token: successor } = (await t.admin('POST', '/tokens', { label: 'successor' })).json().data;
    expect((await t.admin('POST', `/tokens/${me}/revoke`)).statusCode).toBe(200);
    expect((await t.admin('GET', '/partners')).statusCode).toBe(401);
    expect((await as(successor, 'GET', '/partners')).statusCode).toBe(200);
  });

  it('keeps one token active when the last two are revoked at the same moment', async () => {
    const me = await ownId();
    const other = (await t.admin('POST', '/tokens', { label: 'other' })).json().data.id;
    const answers = await Promise.all(
      [t.services.tokens.revoke(me), t.services.tokens.revoke(other)].map((revocation) =>
        revocation.then(
          () => 'revoked',
          (error: Error) => error.message,
        ),
      ),
    );
    expect(answers.sort()).toEqual([
      'cannot revoke the last active admin token: create another one first',
      'revoked',
    ]);
    expect(await t.store.countAdminTokens(now)).toBe(1);
  });

  it('validates the label and the expiry', async () => {
    for (const body of [{}, { label: '' }, { label: 'x'.repeat(101) }, { label: 'ok', expiresInHours: 0 }]) {
      expect((await t.admin('POST', '/tokens', body)).statusCode).toBe(400);
    }
  });

  it('does not register a revoked PLACARD_ADMIN_TOKEN again at start', async () => {
    const configured = generateAdminToken().plaintext;
    expect((await t.services.tokens.ensure(configured)).generated).toBeUndefined();
    const id = (await t.admin('GET', '/tokens'))
      .json()
      .data.find((token: { label: string }) => token.label === 'configured').id;
    expect(await tokenAudit(id)).toEqual(['system create']);
    await t.admin('POST', `/tokens/${id}/revoke`);
    await expect(t.services.tokens.ensure(configured)).rejects.toThrow(
      'PLACARD_ADMIN_TOKEN is revoked or expired: configure another token',
    );
    expect((await as(configured, 'GET', '/partners')).statusCode).toBe(401);
  });
  it('names the tokens earlier PLACARD_ADMIN_TOKEN values left valid, and revokes them when asked', async () => {
    const first = generateAdminToken().plaintext;
    const second = generateAdminToken().plaintext;
    const started = await t.services.tokens.ensure(first);
    expect(started.previous).toEqual([]);
    const firstId = started.configured!.id;
    expect(startTokenNotices(started)).toEqual([
      {
        level: 'info',
        tokenId: firstId,
        message: `PLACARD_ADMIN_TOKEN is admin token ${firstId} (${first.slice(0, 10)}…)`,
      },
    ]);

    // The variable changed: the old token still works, and start says so with the way to revoke it.
    const changed = await t.services.tokens.ensure(second);
    expect(changed.previous.map((token) => token.id)).toEqual([firstId]);
    expect(startTokenNotices(changed)[1]).toEqual({
      level: 'warn',
      tokenId: firstId,
      message:
        `admin token ${firstId} (${first.slice(0, 10)}…), which an earlier PLACARD_ADMIN_TOKEN registered, is still valid: ` +
        `revoke it with "placard tokens revoke ${firstId}", or start with PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS=true`,
    });
    expect((await as(first, 'GET', '/partners')).statusCode).toBe(200);
    // A token created by hand with the same label is not one of them.
    await t.admin('POST', '/tokens', { label: 'configured' });

    const revoking = await t.services.tokens.ensure(second, true);
    expect(revoking.revoked.map((token) => token.id)).toEqual([firstId]);
    expect(revoking.previous).toEqual([]);
    expect((await as(first, 'GET', '/partners')).statusCode).toBe(401);
    expect((await as(second, 'GET', '/partners')).statusCode).toBe(200);
    expect(await tokenAudit(firstId)).toEqual(['system create', 'system revoke']);
    const labelled = (await t.admin('GET', '/tokens')).json().data as Array<{
      label: string;
      status: string;
    }>;
    expect(labelled.filter((token) => token.label === 'configured').map((token) => token.status)).toEqual([
      'revoked',
      'active',
      'active',
    ]);
  });
});
