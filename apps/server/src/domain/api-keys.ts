import { hash, randomBytes } from 'node:crypto';

/**
 * API key format (rule D6): `plc_` + 32 random base62 characters + a 6-character base62
 * checksum of those 32. The checksum lets a typo or a made-up key be rejected without a look-up;
 * only the SHA-256 digest and a short display prefix are ever stored.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'plc_';
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = /^plc_[0-9A-Za-z]{38}$/;

function base62(bytes: Buffer, length: number): string {
  let out = '';
  for (let i = 0; out.length < length; i++) {
    const byte = bytes[i % bytes.length] as number;
    out += ALPHABET[byte % 62];
  }
  return out;
}

function checksum(body: string): string {
  return base62(hash('sha256', body, 'buffer'), CHECKSUM_LENGTH);
}

/** Uniformly random base62 text; rejection sampling keeps every character equally likely (256 = 4·62 + 8). */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length + 16))
      if (byte < 248 && text.length < length) text += ALPHABET[byte % 62];
  }
  return text;
}

/** A fresh key; its plaintext is shown once and never stored. */
export function generateApiKey(): { plaintext: string; digest: string; displayPrefix: string } {
  const body = randomBase62(BODY_LENGTH);
  const plaintext = PREFIX + body + checksum(body);
  return { plaintext, digest: digestApiKey(plaintext), displayPrefix: displayPrefix(plaintext) };
}

/** True when the string has the key shape and a matching checksum. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return candidate.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

/**
 * Admin tokens for the management API: `pla_` + 40 random base62 characters. Stored as SHA-256
 * digests like API keys; the distinct prefix keeps a partner key from ever passing as one.
 */
export function generateAdminToken(): { plaintext: string; digest: string; displayPrefix: string } {
  const plaintext = `pla_${randomBase62(40)}`;
  return { plaintext, digest: digestApiKey(plaintext), displayPrefix: displayPrefix(plaintext) };
}

export const isWellFormedAdminToken = (candidate: string): boolean => /^pla_[0-9A-Za-z]{40}$/.test(candidate);

/**
 * A browser secret (a session cookie, a one-time link): 43 base62 characters (256 bits), stored
 * as its digest like keys and tokens.
 */
export function generateBrowserSecret(): { plaintext: string; digest: string } {
  const plaintext = randomBase62(43);
  return { plaintext, digest: digestApiKey(plaintext) };
}

export const isWellFormedBrowserSecret = (candidate: string): boolean => /^[0-9A-Za-z]{43}$/.test(candidate);

/** The stored form of a key: hex SHA-256 of the whole plaintext. */
export function digestApiKey(plaintext: string): string {
  return hash('sha256', plaintext, 'hex');
}

/** What operators see in listings: enough to recognise a key, too little to use it. */
export function displayPrefix(plaintext: string): string {
  return plaintext.slice(0, PREFIX.length + 6);
}

/** The credential part of an `Authorization: Bearer <key>` header, or undefined (scheme is case-insensitive). */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
