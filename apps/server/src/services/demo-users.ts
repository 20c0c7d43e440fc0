import fs from 'node:fs';
import path from 'node:path';
import { generateBrowserSecret } from '../domain/api-keys.js';
import { ACCOUNT_KINDS, type Account } from '../domain/accounts.js';
import { checkNewPassword } from '../domain/passwords.js';
import type { Store } from '../store/store.js';
import { hashPassword, verifyPassword } from './passwords.js';
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

/** The demo users' sign-ins a start shows, and those it does not because the store would refuse them. */
export interface DemoSignIns {
  /** The file the passwords are kept in. */
  file: string;
  /** Sign-ins this store accepts now. */
  signIns: DemoSignIn[];
  /** E-mail addresses in the file whose password this store would refuse (or that it lacks). */
  withheld: string[];
}

/**
 * One admin for each kind of account in the demo data (the operator, the advertiser Northwind
 * Outfitters, the partner Demo Publisher), each with a random password, written to a file in the
 * data directory (mode 0600) so later starts print them again, as the demo key is. Real users get
 * invitation links instead; their passwords are never written anywhere. Undefined when the store
 * has no demo data.
 *
 * As with the demo key (`seedDemo`), the file is shared by every store this data directory serves
 * and holds the passwords of the store seeded last; a person may also have changed their password
 * since. So a later start signs each one in against the store, as the sign-in page would, and
 * shows only those that work.
 */
export async function seedDemoUsers(store: Store, dataDir: string): Promise<DemoSignIns | undefined> {
  const file = path.join(dataDir, DEMO_SIGN_INS_FILE);
  if (await store.getMeta(SEEDED_FLAG)) {
    const written = readSignIns(file);
    const accepted: DemoSignIn[] = [];
    for (const signIn of written) if (await signsIn(store, signIn)) accepted.push(signIn);
    const withheld = written.filter((signIn) => !accepted.includes(signIn)).map((signIn) => signIn.email);
    return { file, signIns: accepted, withheld };
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
  return { file, signIns, withheld: [] };
}

/** The sign-ins in the file; none when it is missing or not what this module writes. */
function readSignIns(file: string): DemoSignIn[] {
  if (!fs.existsSync(file)) return [];
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return Array.isArray(parsed) ? parsed.filter(isSignIn) : [];
  } catch {
    return []; // a damaged file shows nothing rather than stopping the start
  }
}

function isSignIn(value: unknown): value is DemoSignIn {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, email, password } = value as Record<string, unknown>;
  return (
    ACCOUNT_KINDS.some((known) => known === kind) && typeof email === 'string' && typeof password === 'string'
  );
}

/** Whether the sign-in page would let this one in: the same checks as `Sessions.signIn`, without its limits. */
async function signsIn(store: Store, signIn: DemoSignIn): Promise<boolean> {
  const found = await store.findUserForSignIn(signIn.email);
  if (!found || found.passwordHash === null || found.user.disabledAt !== null) return false;
  return verifyPassword(found.passwordHash, signIn.password);
}
