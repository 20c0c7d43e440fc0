import { describe, expect, it } from 'vitest';
import { MAX_QUERY_PARAMS, readFetchParams } from './query.js';

describe('readFetchParams', () => {
  it('reads the four fetch parameters and ignores the rest', () => {
    expect(readFetchParams('placement=header_banner&limit=5&x=1&location=us&device=Mobile')).toEqual({
      placement: 'header_banner',
      limit: '5',
      location: 'us',
      device: 'Mobile',
    });
    expect(readFetchParams('')).toEqual({
      placement: undefined,
      limit: undefined,
      location: undefined,
      device: undefined,
    });
  });

  it('decodes percent escapes and plus signs, in names and values, keeping malformed escapes', () => {
    expect(readFetchParams('pl%61cement=a%20b+c&limit=%ZZ').placement).toBe('a b c');
    expect(readFetchParams('limit=%ZZ').limit).toBe('%ZZ');
  });

  it('keeps the first two values of a repeated parameter, and reads a bare name as empty', () => {
    expect(readFetchParams('limit=1&limit=2&limit=3').limit).toEqual(['1', '2']);
    expect(readFetchParams('placement&&device=').placement).toBe('');
    expect(readFetchParams('placement&&device=').device).toBe('');
  });

  it('reads a value only from its own parameter, never from a later one', () => {
    expect(readFetchParams('placement&limit=5')).toMatchObject({ placement: '', limit: '5' });
    expect(readFetchParams('device&x=mobile').device).toBe('');
  });

  it(`refuses a query of more than ${MAX_QUERY_PARAMS} parameters, naming the bound`, () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&');
    expect(() => readFetchParams(many(MAX_QUERY_PARAMS))).not.toThrow();
    expect(() => readFetchParams(many(MAX_QUERY_PARAMS + 1))).toThrow(
      `a query may have at most ${MAX_QUERY_PARAMS} parameters`,
    );
    // Empty segments (`&&`) are not parameters.
    expect(() => readFetchParams('&'.repeat(1000) + 'placement=a')).not.toThrow();
  });
});
