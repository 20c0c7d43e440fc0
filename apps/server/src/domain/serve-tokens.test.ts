import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { otherSpellings } from '../../test/helpers/token-spellings.js';
import {
  parseServeToken,
  SERVE_TOKEN_CLOCK_SKEW_MS,
  SERVE_TOKEN_NONCE_BYTES,
  ServeTokens,
} from './serve-tokens.js';

describe('serve tokens (D15)', () => {
  const tokens = new ServeTokens(randomBytes(32));
  const now = Date.parse('2026-11-22T10:00:00Z');
  const nonce = randomBytes(SERVE_TOKEN_NONCE_BYTES);
  const token = tokens.issue(7, 123, 'header_banner', now, nonce);

  it('reads back what it signed: the nonce names it, and it is URL-safe', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(tokens.read(token, 7, 123, 'header_banner', now)).toEqual({
      id: nonce.toString('base64url'),
      issuedAt: now,
    });
  });

  it('names a token by its nonce, so every spelling that decodes to its bytes is the same token', () => {
    const spellings = otherSpellings(token);
    // Padding, the other alphabet, the last character's unused bits, skipped characters.
    expect(spellings.length).toBeGreaterThanOrEqual(15);
    for (const spelling of spellings) {
      expect(tokens.read(spelling, 7, 123, 'header_banner', now)).toEqual({
        id: nonce.toString('base64url'),
        issuedAt: now,
      });
    }
  });

  it('refuses another key, campaign, placement, secret, an altered byte, and a time in the future', () => {
    expect(tokens.read(token, 8, 123, 'header_banner', now)).toBeNull();
    expect(tokens.read(token, 7, 124, 'header_banner', now)).toBeNull();
    expect(tokens.read(token, 7, 123, 'sidebar_top', now)).toBeNull();
    expect(new ServeTokens(randomBytes(32)).read(token, 7, 123, 'header_banner', now)).toBeNull();
    const bytes = Buffer.from(token, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const altered = Buffer.from(bytes);
      altered[i] = altered[i] ^ 0x80;
      expect(tokens.read(altered.toString('base64url'), 7, 123, 'header_banner', now)).toBeNull();
    }
    expect(tokens.read(token.slice(0, -2), 7, 123, 'header_banner', now)).toBeNull();
    expect(tokens.read('', 7, 123, 'header_banner', now)).toBeNull();
    const ahead = tokens.issue(7, 123, 'header_banner', now + SERVE_TOKEN_CLOCK_SKEW_MS + 1, nonce);
    expect(tokens.read(ahead, 7, 123, 'header_banner', now)).toBeNull();
  });

  it('signs with HMAC-SHA256 exactly: secrets shorter and longer than its 64-byte block', () => {
    for (const length of [16, 32, 63, 64, 65, 100]) {
      const secret = randomBytes(length);
      const issued = Buffer.from(
        new ServeTokens(secret).issue(7, 123, 'header_banner', now, nonce),
        'base64url',
      );
      const payload = issued.subarray(0, issued.length - 16);
      const hmac = createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
      expect(issued.subarray(issued.length - 16)).toEqual(hmac);
    }
  });

  it('tells ids apart above 32 bits: each half of the 8 bytes counts', () => {
    const high = 2 ** 40 + 7;
    const far = tokens.issue(high, 2 ** 32, 'header_banner', now, nonce);
    expect(tokens.read(far, high, 2 ** 32, 'header_banner', now)).not.toBeNull();
    expect(tokens.read(far, 7, 2 ** 32, 'header_banner', now)).toBeNull();
    expect(tokens.read(far, high, 0, 'header_banner', now)).toBeNull();
    expect(tokens.read(far, 2 ** 41 + 7, 2 ** 32, 'header_banner', now)).toBeNull();
    expect(tokens.read(far, Number.MAX_SAFE_INTEGER, 2 ** 32, 'header_banner', now)).toBeNull();
  });

  it('takes any string of 1 to 256 characters in a body, and refuses anything else', () => {
    expect(parseServeToken('x')).toBe('x');
    for (const value of ['', 'x'.repeat(257), 5, null, {}]) {
      expect(() => parseServeToken(value)).toThrow('token must be a string of 1 to 256 characters');
    }
  });
});
