import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { invalid } from './errors.js';

/**
 * Serve tokens (D15): asked for with `tokens=true` on fetch, one per returned campaign, echoed in
 * the optional `token` field of that campaign's impression and click. A fetch answer with tokens is
 * for one page view: each token is billed for one impression, and for one click after it.
 *
 * A token is `base64url(payload ‖ mac)`: the payload holds a version byte, the API key id, the
 * campaign id, the time it was issued, a random nonce and the placement; the mac is the first 128
 * bits of HMAC-SHA256 of the payload under the deployment's secret (`PLACARD_TOKEN_SECRET`, or one
 * generated once and kept in the store, so every instance and restart agree). Nothing in it is
 * secret from the partner; it only cannot be made or altered without the secret. The nonce names
 * the token in the per-token state (`limits/serve-token-states.ts`), so two spellings of one token
 * (base64 decoding is lenient) are still one token.
 */

/**
 * How long after fetch a token's impression is billable: an hour, the same as a click window. A
 * page view shows its campaigns within seconds of fetching them; an hour leaves room for a tab
 * opened in the background, and is short enough that a token kept for later is worth little. A
 * partner that caches a tokened answer for longer sees `expired token` in its reports.
 */
export const SERVE_TOKEN_TTL_MS = 60 * 60 * 1000;

/**
 * The least time between a token's impression and its click for the click to be billed: a second.
 * A person must see the campaign, decide and move the pointer or finger to it (a simple visual
 * reaction alone takes a quarter of a second, aiming and deciding several times that); a script
 * clicks within milliseconds of reporting the impression. Both events pass through the partner's
 * server, so its latency is on both sides and mostly cancels out.
 */
export const MIN_CLICK_DELAY_MS = 1_000;

/** How far in the future a token's issue time may be (clocks of instances differ a little). */
export const SERVE_TOKEN_CLOCK_SKEW_MS = 60 * 1000;

/** Tokens are about 80 characters; anything longer than this in a tracking body is a 400. */
export const MAX_SERVE_TOKEN_LENGTH = 256;
export const SERVE_TOKEN_MESSAGE = `token must be a string of 1 to ${MAX_SERVE_TOKEN_LENGTH} characters`;
export const TOKENS_PARAM_MESSAGE = 'tokens must be true or false';

const VERSION = 1;
const NONCE_BYTES = 12;
const MAC_BYTES = 16;
/** version, key id, campaign id (8 bytes each), issued at (6 bytes, ms), nonce; then the placement. */
const FIXED = 1 + 8 + 8 + 6 + NONCE_BYTES;
export const SERVE_TOKEN_NONCE_BYTES = NONCE_BYTES;

/** What a token that verified says about itself. */
export interface ServeTokenClaims {
  /** The nonce, base64url: the token's name in the per-token state. */
  id: string;
  issuedAt: number;
}

/** Validates the optional `token` body field: any string of sane length (its value is judged later). */
export function parseServeToken(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_SERVE_TOKEN_LENGTH) {
    throw invalid(SERVE_TOKEN_MESSAGE);
  }
  return value;
}

/**
 * Whether the 8 bytes at `offset` hold `id` (a safe integer), big-endian: compared as two 32-bit
 * halves, as reading them as a BigInt allocates on every tracking request.
 */
function holdsId(bytes: Buffer, offset: number, id: number): boolean {
  return (
    bytes.readUInt32BE(offset) === Math.floor(id / 2 ** 32) && bytes.readUInt32BE(offset + 4) === id % 2 ** 32
  );
}

/** Signs and reads serve tokens with one secret. */
export class ServeTokens {
  /**
   * The secret as a key object, made once: given the raw bytes, `createHmac` imports them as a key
   * on every call, which took 17.9 µs of CPU a call on Node 24 (2.5 µs on Node 20), against 2.5 µs
   * on both with the key object (`npm run bench:token-mac`, docs/benchmarks.md); tokens are checked
   * on every tracking request that carries one.
   */
  private readonly key: KeyObject;

  constructor(secret: Buffer) {
    if (secret.length < 16) throw new Error('a serve token secret needs at least 16 bytes');
    this.key = createSecretKey(secret);
  }

  /** A token for one campaign of one fetch answer; `nonce` is `SERVE_TOKEN_NONCE_BYTES` random bytes. */
  issue(apiKeyId: number, campaignId: number, placement: string, issuedAt: number, nonce: Buffer): string {
    const place = Buffer.from(placement, 'utf8');
    const token = Buffer.allocUnsafe(FIXED + place.length + MAC_BYTES);
    token.writeUInt8(VERSION, 0);
    token.writeBigUInt64BE(BigInt(apiKeyId), 1);
    token.writeBigUInt64BE(BigInt(campaignId), 9);
    token.writeUIntBE(issuedAt, 17, 6);
    nonce.copy(token, 23, 0, NONCE_BYTES);
    place.copy(token, FIXED);
    this.mac(token.subarray(0, FIXED + place.length)).copy(token, FIXED + place.length);
    return token.toString('base64url');
  }

  /**
   * The token's claims if this deployment signed it for this API key, campaign and placement and it
   * was not issued in the future; null otherwise (forged, altered, another key's, another
   * campaign's or placement's, another deployment's). Expiry is the caller's: it depends on the kind.
   */
  read(
    token: string,
    apiKeyId: number,
    campaignId: number,
    placement: string,
    now: number,
  ): ServeTokenClaims | null {
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length <= FIXED + MAC_BYTES || bytes.readUInt8(0) !== VERSION) return null;
    const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
    if (!timingSafeEqual(this.mac(payload), bytes.subarray(bytes.length - MAC_BYTES))) return null;
    const issuedAt = payload.readUIntBE(17, 6);
    if (
      !holdsId(payload, 1, apiKeyId) ||
      !holdsId(payload, 9, campaignId) ||
      payload.toString('utf8', FIXED) !== placement ||
      issuedAt > now + SERVE_TOKEN_CLOCK_SKEW_MS
    ) {
      return null;
    }
    return { id: payload.toString('base64url', 23, FIXED), issuedAt };
  }

  private mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}
