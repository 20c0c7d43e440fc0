/**
 * Monthly statements (D18) as the management API, the CLI and the dashboard read them. Money is integer micros of
 * the server's currency; a statement is issued once for a closed month and never changes afterwards.
 */
import type { StatementLineRecord } from '../store/statements.js';

export type StatementKind = 'advertiser' | 'partner';

/** One line of a statement: a campaign's spend, a flat campaign's price, a partner's earnings by placement and key,
 * or an adjustment carried onto it. Invalid traffic is shown as counts and never enters the amount. */
export type StatementLineView = Omit<StatementLineRecord, 'amountMicros'> & {
  /** Micros as the API and pages give them (a plain number). */
  amountMicros: number;
};

export interface StatementPaymentView {
  reference: string;
  paidAt: string;
  paidBy: string;
}

export interface StatementSummaryView {
  id: number;
  kind: StatementKind;
  accountId: number;
  accountName: string;
  /** YYYY-MM in the billing time zone. */
  month: string;
  /** ISO instants: the month's start and end in the billing time zone. */
  periodStart: string;
  periodEnd: string;
  currency: string;
  issuedAt: string;
  issuedBy: string;
  subtotalMicros: number;
  adjustmentsMicros: number;
  openingBalanceMicros: number;
  totalMicros: number;
  payableMicros: number;
  carriedForwardMicros: number;
  payment: StatementPaymentView | null;
}

export interface StatementView extends StatementSummaryView {
  lines: StatementLineView[];
}

export interface AdjustmentView {
  id: number;
  kind: StatementKind;
  accountId: number;
  accountName: string;
  amountMicros: number;
  reason: string;
  createdAt: string;
  createdBy: string;
  carriedOnStatementId: number | null;
}

export interface StatementMonthView {
  month: string;
  closed: boolean;
  issued: boolean;
  nextToIssue: boolean;
}
