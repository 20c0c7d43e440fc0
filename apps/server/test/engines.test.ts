import { describe, expect, it } from 'vitest';
import { parseEngines } from './helpers/engines.js';

describe('ENGINES: which engines the suites on each engine run on', () => {
  it('runs both when unset or blank', () => {
    expect(parseEngines(undefined)).toEqual(['sqlite', 'postgres']);
    expect(parseEngines('')).toEqual(['sqlite', 'postgres']);
    expect(parseEngines('  ')).toEqual(['sqlite', 'postgres']);
  });

  it('runs only the one named', () => {
    expect(parseEngines('sqlite')).toEqual(['sqlite']);
    expect(parseEngines('postgres')).toEqual(['postgres']);
  });

  it('takes a comma-separated list, in any case and order, with spaces', () => {
    expect(parseEngines('Postgres, SQLITE')).toEqual(['sqlite', 'postgres']);
    expect(parseEngines('sqlite,sqlite')).toEqual(['sqlite']);
  });

  it('refuses an unknown name instead of running nothing', () => {
    expect(() => parseEngines('postgresql')).toThrow(/unknown engine "postgresql"/);
    expect(() => parseEngines('sqlite,')).toThrow(/unknown engine ""/);
  });
});
