import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserService } from '../src/services/users.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';

/**
 * Users are the admins' (D13): `admin` is everything the account may do, its users included;
 * `manager` everything but users; `reporter` read only. A token of either of the two others is
 * refused the users, reading them as changing them; the CLI acts as the operator's admin.
 */
describe('users, the admins’ alone', () => {
  let t: TestApp;
  let advertiser = '';
  let ownUser = 0;
  beforeAll(async () => {
    t = await createTestApp();
    const [id] = await t.addCampaigns([campaign()], 'Users Ads');
    advertiser = `advertiser:${(await t.campaigns.get(id)).advertiserId}`;
    const cli = new UserService(t.store, undefined, t.url);
    ownUser = (await cli.create({ email: 'colleague@users.example', account: advertiser, role: 'reporter' }))
      .user.id;
  });
  afterAll(() => t.close());

  const tokenOf = async (account: string, role: string) =>
    (await t.services.tokens.create({ label: `${account} ${role}`, account, role })).plaintext;

  it('refuses a manager’s and a reporter’s token the list and each user, 403, of any account', async () => {
    for (const account of ['operator', advertiser]) {
      for (const role of ['manager', 'reporter']) {
        const token = await tokenOf(account, role);
        for (const path of ['/users', `/users?account=${advertiser}`, `/users/${ownUser}`]) {
          const answer = await t.admin('GET', path, undefined, token);
          expect(answer.statusCode, `${account} ${role} ${path}`).toBe(403);
          expect(answer.json()).toEqual({
            status: 'error',
            code: 'forbidden',
            message: 'only an admin of the account may manage its users',
          });
        }
      }
    }
  });

  it('answers the account’s admins, and another account’s user as missing', async () => {
    const admin = await tokenOf(advertiser, 'admin');
    const listed = await t.admin('GET', '/users', undefined, admin);
    expect(listed.statusCode).toBe(200);
    expect((listed.json().data as Array<{ id: number }>).map((user) => user.id)).toEqual([ownUser]);
    expect((await t.admin('GET', `/users/${ownUser}`, undefined, admin)).statusCode).toBe(200);
    const [other] = await t.addCampaigns([campaign()], 'Other Ads');
    const stranger = await tokenOf(`advertiser:${(await t.campaigns.get(other)).advertiserId}`, 'manager');
    expect((await t.admin('GET', `/users/${ownUser}`, undefined, stranger)).statusCode).toBe(404);
  });

  it('lists every account’s users to the operator’s admin token and the CLI', async () => {
    const listed = await t.admin('GET', '/users');
    expect(listed.statusCode).toBe(200);
    expect((listed.json().data as Array<{ id: number }>).map((user) => user.id)).toContain(ownUser);
    expect((await new UserService(t.store).list()).map((user) => user.id)).toContain(ownUser);
  });
});
