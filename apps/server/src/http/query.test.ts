import { describe, expect, it } from 'vitest';
import { readFetchParams } from './query.js';

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

  it('collects a repeated parameter into an array, and reads a bare name as empty', () => {
    expect(readFetchParams('limit=1&limit=2&limit=3').limit).toEqual(['1', '2', '3']);
    expect(readFetchParams('placement&&device=').placement).toBe('');
    expect(readFetchParams('placement&&device=').device).toBe('');
  });
});
