import fs from 'node:fs';
import path from 'node:path';
import { generateBrowserSecret } from '../domain/api-keys.js';
import type { Account } from '../domain/accounts.js';
import { checkNewPassword } from '../domain/passwords.js';
import type { Store } from '../store/store.js';
import { hashPassword } from './passwords.js';
import { DEMO_PARTNER } from './demo.js';

const SEEDED_FLAG = 'demo_users_seeded';
export const DEMO_SIGN_INS_FILE = 'demo-sign-ins.json';
/** The demo advertiser whose campaigns the demo's advertiser user sees. */
export const DEMO_ADVERTISER = 'Northwind Outfitters';

/** One ready sign-in of the demo: who, and the password to type. */
export interface DemoSignIn {
  kind: Account['kind'];
  email: string;
  password: string;
}

/**
 * A random password of 20 letters and digits that the password rule takes, as a person's must be:
 * one it refuses (a run like `abcd…`, the person's own name) is all but impossible, and drawn again.
 */
export function demoPassword(email: string): string {
  for (;;) {
    const password = generateBrowserSecret().plaintext.slice(0, 20);
    try {
      return checkNewPassword(password, 'password', email);
    } catch {
      // Refused: draw another.
    }
  }
}

/**
 * One admin for each kind of account in the demo data (the operator, the advertiser Northwind
 * Outfitters, the partner Demo Publisher), each with a random password, written to a file in the
 * data directory (mode 0600) so later starts print them again, as the demo key is. Real users get
 * invitation links instead; their passwords are never written anywhere.
 */
export async function seedDemoUsers(store: Store, dataDir: string): Promise<DemoSignIn[] | undefined> {
  const file = path.join(dataDir, DEMO_SIGN_INS_FILE);
  if (await store.getMeta(SEEDED_FLAG)) {
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as DemoSignIn[]) : undefined;
  }
  const advertiser = await store.findAdvertiser(DEMO_ADVERTISER);
  const partner = await store.findPartner(DEMO_PARTNER);
  if (!advertiser || !partner) return undefined; // not the demo data set
  const people: Array<{ email: string; account: Account }> = [
    { email: 'operator@placard.example', account: { kind: 'operator' } },
    { email: 'ads@northwind.example', account: { kind: 'advertiser', id: advertiser.id } },
    { email: 'web@demo-publisher.example', account: { kind: 'partner', id: partner.id } },
  ];
  const signIns: DemoSignIn[] = [];
  for (const person of people) {
    const password = demoPassword(person.email);
    const existing = await store.findUserForSignIn(person.email);
    const user = existing?.user ?? (await store.createUser({ ...person, role: 'admin' }));
    await store.updateUser(user.id, { passwordHash: await hashPassword(password) });
    signIns.push({ kind: person.account.kind, email: person.email, password });
  }
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(signIns, null, 2)}\n`, { mode: 0o600 });
  await store.setMeta(SEEDED_FLAG, new Date().toISOString());
  return signIns;
}
