import { expect, it } from 'vitest';
import { micros } from './money.js';
import { statementTotals } from './statement-totals.js';

const amounts = (subtotal: number, adjustments: number, openingBalance: number) => ({
  subtotal: micros(subtotal),
  adjustments: micros(adjustments),
  openingBalance: micros(openingBalance),
});

it('carries a partner total below the minimum payout forward, and pays all of it once reached', () => {
  const minimum = micros(50_000_000);
  expect(statementTotals('partner', amounts(30_000_000, 0, 0), minimum)).toEqual({
    total: 30_000_000,
    payable: 0,
    carriedForward: 30_000_000,
  });
  expect(statementTotals('partner', amounts(45_000_000, -5_000_000, 30_000_000), minimum)).toEqual({
    total: 70_000_000,
    payable: 70_000_000,
    carriedForward: 0,
  });
  expect(statementTotals('partner', amounts(50_000_000, 0, 0), minimum).payable).toBe(50_000_000);
});

it('never pays a negative or zero partner total, even with no minimum, and bills an advertiser all of it', () => {
  expect(statementTotals('partner', amounts(0, -2, 0), micros(0))).toEqual({
    total: -2,
    payable: 0,
    carriedForward: -2,
  });
  expect(statementTotals('partner', amounts(0, 0, 0), micros(0)).payable).toBe(0);
  expect(statementTotals('advertiser', amounts(10, 5, 0), micros(50_000_000))).toEqual({
    total: 15,
    payable: 15,
    carriedForward: 0,
  });
});
