// What a monthly statement (D18) comes to: its total, what is payable and what is carried forward.
import { addMicros, subtractMicros, type Micros } from './money.js';

export interface StatementTotals {
  total: Micros;
  payable: Micros;
  carriedForward: Micros;
}

/**
 * A statement's total is its subtotal (the month's spend or earnings), its adjustments and the
 * balance the account's previous statement carried forward. An advertiser owes all of it. A
 * partner is paid all of it once it reaches `minimumPayout`; below it, nothing is payable and the
 * whole total is carried forward to its next statement (a negative total too, whatever the minimum).
 */
export function statementTotals(
  kind: 'advertiser' | 'partner',
  amounts: { subtotal: Micros; adjustments: Micros; openingBalance: Micros },
  minimumPayout: Micros,
): StatementTotals {
  const total = addMicros(addMicros(amounts.subtotal, amounts.adjustments), amounts.openingBalance);
  const payable = kind === 'advertiser' || (total >= minimumPayout && total > 0) ? total : (0 as Micros);
  return { total, payable, carriedForward: subtractMicros(total, payable) };
}
