// Serve tokens for the tracking load (D15): what a partner fetching with `tokens=true` would echo.
// The benchmark mints them with the server's own signer and a secret it gives the server
// (PLACARD_TOKEN_SECRET), instead of fetching them, so that the measured load is tracking alone.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { ServeTokens } from '../../apps/server/dist/domain/serve-tokens.js';

/** The secret the benchmark's servers sign and check tokens with. */
export const BENCH_TOKEN_SECRET = 'placard-bench-serve-token-secret-0123456789';

/** More than one measurement sends at this machine's rates (12 s at about 15,000 events a second). */
const TOKENS_PER_FILE = 250_000;

/**
 * Writes a file of fresh tokens, one line each: `campaignId placement token`, for random pairs of
 * the seeded store; `events.lua` reads it from PLACARD_BENCH_TOKENS. Every wrk invocation gets a
 * file of its own, so no token is replayed across the warm-up and the measurement.
 */
export function writeTokens(file, { keyId, pairs }) {
  const signer = new ServeTokens(Buffer.from(BENCH_TOKEN_SECRET, 'utf8'));
  const now = Date.now();
  const lines = [];
  for (let i = 0; i < TOKENS_PER_FILE; i++) {
    const [campaignId, placement] = pairs[Math.floor(Math.random() * pairs.length)];
    const token = signer.issue(keyId, campaignId, placement, now, randomBytes(12));
    lines.push(`${campaignId} ${placement} ${token}`);
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}
