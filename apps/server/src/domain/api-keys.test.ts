import { describe, expect, it } from 'vitest';
import { bearerToken, digestApiKey, displayPrefix, generateApiKey, isWellFormedApiKey } from './api-keys.js';

describe('API keys (D6)', () => {
  it('generates distinct, well-formed keys whose digest and prefix match', () => {
    const keys = Array.from({ length: 500 }, generateApiKey);
    expect(new Set(keys.map((k) => k.plaintext)).size).toBe(500);
    for (const key of keys) {
      expect(key.plaintext).toMatch(/^plc_[0-9A-Za-z]{38}$/);
      expect(isWellFormedApiKey(key.plaintext)).toBe(true);
      expect(key.digest).toBe(digestApiKey(key.plaintext));
      expect(key.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(key.displayPrefix).toBe(displayPrefix(key.plaintext));
      expect(key.plaintext.startsWith(key.displayPrefix)).toBe(true);
    }
  });

  it('rejects any single-character change through the checksum', () => {
    const { plaintext } = generateApiKey();
    for (let i = 4; i < plaintext.length; i++) {
      const changed = plaintext.slice(0, i) + (plaintext[i] === 'A' ? 'B' : 'A') + plaintext.slice(i + 1);
      expect(isWellFormedApiKey(changed)).toBe(false);
    }
  });

  it.each([
    '',
    'plc_',
    'sk_live_abc',
    `plc_${'a'.repeat(37)}`,
    `plc_${'a'.repeat(39)}`,
    `PLC_${'a'.repeat(38)}`,
  ])('rejects the malformed key %j', (candidate) => expect(isWellFormedApiKey(candidate)).toBe(false));

  it('reads the credential of a Bearer header, in any case of the scheme word', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
