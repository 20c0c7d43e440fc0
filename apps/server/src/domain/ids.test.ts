import { describe, expect, it } from 'vitest';
import { idFromText, isId } from './ids.js';

describe('ids', () => {
  it('reads digits that can be a stored id, and nothing else', () => {
    expect(idFromText('1')).toBe(1);
    expect(idFromText('007')).toBe(7);
    expect(idFromText('9007199254740991')).toBe(9007199254740991);
    for (const text of [
      '',
      '0',
      '-1',
      '1.5',
      '1e3',
      '12abc',
      ' 1',
      '9007199254740993',
      '9223372036854775808',
      '99999999999999999999',
    ])
      expect(idFromText(text), text).toBeUndefined();
  });

  it('takes positive safe integers as ids', () => {
    expect(isId(1)).toBe(true);
    for (const value of [0, -1, 1.5, 2 ** 63, Number.NaN, '1', null]) expect(isId(value)).toBe(false);
  });
});
