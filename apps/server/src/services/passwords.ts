// Password hashing with argon2id through @node-rs/argon2 (a maintained binding whose binary ships
// in the npm package, so nothing is compiled on install).
import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id`: the package declares its enum `const`, which isolated modules cannot read. */
const ARGON2ID = 2;

/** D13's floor, which is also OWASP's first recommended setting: 19 MiB, 2 passes, 1 lane. */
const PARAMETERS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMETERS);
}

export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  try {
    return await verify(encoded, password);
  } catch {
    return false; // a malformed stored hash opens nothing
  }
}

/**
 * A hash of a password nobody knows, verified when the e-mail address is unknown, so that an
 * unknown address and a wrong password take the same time to refuse.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(`decoy-${Math.random()}-${Date.now()}`);
  return decoy;
}
