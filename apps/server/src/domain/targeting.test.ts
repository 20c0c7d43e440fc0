import { describe, expect, it } from 'vitest';
import { COUNTRY_CODES, parseDevice, parseLocation } from './targeting.js';

describe('targeting values (D2)', () => {
  it('knows the 249 assigned ISO 3166-1 alpha-2 codes plus XK', () => {
    expect(COUNTRY_CODES.size).toBe(250);
    for (const code of ['US', 'GB', 'DE', 'XK', 'AQ', 'SS', 'BQ', 'CW'])
      expect(COUNTRY_CODES.has(code)).toBe(true);
    for (const code of ['UK', 'EU', 'ZZ', 'AN', 'YU']) expect(COUNTRY_CODES.has(code)).toBe(false);
  });

  it('normalises case', () => {
    expect(parseLocation('gb')).toBe('GB');
    expect(parseDevice('DeskTop')).toBe('desktop');
  });

  it('rejects other values with the D2 messages', () => {
    expect(() => parseLocation('GBR')).toThrow('location must be an ISO 3166-1 alpha-2 country code');
    expect(() => parseLocation(7)).toThrow('location must be an ISO 3166-1 alpha-2 country code');
    expect(() => parseDevice('console')).toThrow('device must be one of: mobile, desktop, tablet');
  });
});
