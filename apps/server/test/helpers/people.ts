import { expect } from 'vitest';
import type { Actor } from '../../src/services/audit.js';
import { UserService } from '../../src/services/users.js';
import type { TestApp } from './app.js';
import { BrowserClient } from './browser-client.js';

/** The password every test person sets from their invitation link. */
export const PERSON_PASSWORD = 'violet-harbour-lantern';

/**
 * A person with `role` in `account` (D13), invited through the user service at `now` (by `by`, or
 * by the system), who follows the invitation link and sets `PERSON_PASSWORD`: a browser signed in
 * as them.
 */
export async function signedInPerson(
  t: TestApp,
  now: number,
  person: { email: string; account: string; role: string; by?: Actor | undefined },
): Promise<BrowserClient> {
  const { email, account, role, by } = person;
  const { link } = await new UserService(t.store, by, t.url, () => now).create({ email, account, role });
  const browser = new BrowserClient(t.url);
  const path = new URL(link.url).pathname;
  const set = await browser.submit(path, path, { password: PERSON_PASSWORD });
  expect(set.status, set.body).toBe(303);
  return browser;
}
