import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from './errors.js';
import {
  checkBasisPoints,
  checkBillingDate,
  readSharePercent,
  shareEffectiveFrom,
  sharePercent,
} from './revenue-shares.js';

const problemsOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { kind: error.kind, problems: error.problems };
    throw error;
  }
  throw new Error('not refused');
};

describe('revenue shares', () => {
  it('takes whole basis points from 0 to 10000 and refuses anything else naming basisPoints', () => {
    expect(checkBasisPoints(0)).toBe(0);
    expect(checkBasisPoints(10_000)).toBe(10_000);
    for (const bad of [-1, 10_001, 70.5, '7000', null, Number.NaN]) {
      expect(problemsOf(() => checkBasisPoints(bad))).toEqual({
        kind: 'invalid',
        problems: [{ field: 'basisPoints', message: expect.stringContaining('from 0 to 10000') }],
      });
    }
  });

  it('shows a share as a percentage with two decimals from the integer', () => {
    expect(sharePercent(7000)).toBe('70.00');
    expect(sharePercent(7005)).toBe('70.05');
    expect(sharePercent(1)).toBe('0.01');
    expect(sharePercent(10_000)).toBe('100.00');
  });

  it('reads a typed percentage back to exactly the basis points it shows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), (bps) => {
        expect(readSharePercent(sharePercent(bps))).toEqual({ basisPoints: bps });
      }),
    );
    expect(readSharePercent('70')).toEqual({ basisPoints: 7000 });
    expect(readSharePercent(' 70.5% ')).toEqual({ basisPoints: 7050 });
    // 0.29 is not exactly representable as a float: 0.29 * 100 is 28.999…; integers keep it 29.
    expect(readSharePercent('0.29')).toEqual({ basisPoints: 29 });
    expect(readSharePercent('100.01')).toEqual({ problem: 'must be at most 100' });
    expect(readSharePercent('70.005')).toEqual({ problem: expect.stringContaining('two decimals') });
    expect(readSharePercent('-5')).toEqual({ problem: expect.stringContaining('from 0 to 100') });
    expect(readSharePercent('')).toEqual({ problem: expect.stringContaining('is required') });
  });

  it('takes calendar dates only, naming effectiveDate', () => {
    expect(checkBillingDate('2026-12-01')).toBe('2026-12-01');
    for (const bad of ['2026-02-30', '2026-13-01', '1/12/2026', '2026-12-01T00:00', 20261201]) {
      expect(problemsOf(() => checkBillingDate(bad)).problems[0].field).toBe('effectiveDate');
    }
  });

  it('takes effect at the start of its day in the billing zone, from now for today, never before today', () => {
    const now = Date.parse('2026-11-27T21:30:00Z');
    expect(shareEffectiveFrom('2026-12-01', now, 'UTC')).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(shareEffectiveFrom('2026-12-01', now, 'Europe/Paris')).toBe(Date.parse('2026-11-30T23:00:00Z'));
    expect(shareEffectiveFrom('2026-11-27', now, 'UTC')).toBe(now);
    // 21:30 UTC is already the morning of the 28th in Tokyo: the 27th is past there.
    expect(problemsOf(() => shareEffectiveFrom('2026-11-27', now, 'Asia/Tokyo'))).toEqual({
      kind: 'unprocessable',
      problems: [
        {
          field: 'effectiveDate',
          message: 'must be today (2026-11-28, Asia/Tokyo) or later: earnings already made never change',
        },
      ],
    });
    expect(problemsOf(() => shareEffectiveFrom('2026-11-26', now, 'UTC')).kind).toBe('unprocessable');
  });
});
