import { describe, expect, it } from 'vitest';
import type { FieldProblem } from './errors.js';
import {
  frequencyCapReached,
  frequencyCapsFromText,
  parseViewer,
  PERIOD_MS,
  readFrequencyCaps,
} from './frequency-caps.js';

describe('frequency caps (D20)', () => {
  it('reads caps shortest period first and names each problem', () => {
    const problems: FieldProblem[] = [];
    expect(
      readFrequencyCaps(
        [
          { impressions: 10, per: 'week' },
          { impressions: 2, per: 'hour' },
        ],
        'frequencyCaps',
        problems,
      ),
    ).toEqual([
      { impressions: 2, per: 'hour' },
      { impressions: 10, per: 'week' },
    ]);
    expect(problems).toEqual([]);
    readFrequencyCaps(
      [{ impressions: 1.5, per: 'day' }, 'x', { impressions: 2, per: 'day' }, { impressions: 3, per: 'day' }],
      'f',
      problems,
    );
    expect(problems.map((p) => p.field)).toEqual(['f[0].impressions', 'f[1].per', 'f[3].per']);
    expect(readFrequencyCaps(null, 'f', [])).toEqual([]);
  });

  it('counts a rolling window, and the times after the one judged too', () => {
    const caps = [{ impressions: 2, per: 'hour' as const }];
    const at = 10 * PERIOD_MS.hour;
    expect(frequencyCapReached([at - PERIOD_MS.hour, at - 1], caps, at)).toBe(false);
    expect(frequencyCapReached([at - PERIOD_MS.hour + 1, at - 1], caps, at)).toBe(true);
    expect(frequencyCapReached([at + 5, at + 6], caps, at)).toBe(true);
  });

  it('reads caps typed on a command line, and refuses a part it cannot read', () => {
    expect(frequencyCapsFromText(' 3/day, 10 / week ')).toEqual([
      { impressions: 3, per: 'day' },
      { impressions: 10, per: 'week' },
    ]);
    expect(frequencyCapsFromText('')).toEqual([]);
    expect(frequencyCapsFromText('none')).toEqual([]);
    expect(() => frequencyCapsFromText('3 a day')).toThrow('frequency cap "3 a day" is not N/period');
  });

  it('takes a viewer of 1 to 128 characters only', () => {
    expect(parseViewer('u-1')).toBe('u-1');
    expect(parseViewer('v'.repeat(128))).toHaveLength(128);
    for (const bad of ['', 'v'.repeat(129), 12, null])
      expect(() => parseViewer(bad)).toThrow('viewer must be');
  });
});
