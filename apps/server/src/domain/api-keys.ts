import { hash, randomBytes } from 'node:crypto';

/**
 * API key format (decisions D6): `plc_` + 32 random base62 characters + a 6-character base62
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

/** A fresh key; its plaintext is shown once and never stored. */
export function generateApiKey(): { plaintext: string; digest: string; displayPrefix: string } {
  // Rejection sampling keeps every base62 character equally likely (256 is not a multiple of 62).
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  const plaintext = PREFIX + body + checksum(body);
  return { plaintext, digest: digestApiKey(plaintext), displayPrefix: displayPrefix(plaintext) };
}

/** True when the string has the key shape and a matching checksum. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return candidate.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

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
