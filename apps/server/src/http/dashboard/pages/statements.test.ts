import { render } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type {
  AdjustmentView,
  StatementLineView,
  StatementSummaryView,
  StatementView,
} from '../../../services/statement-views.js';
import { AdjustmentsPage } from './adjustments.js';
import type { PageContext } from './layout.js';
import { monthName, OperatorStatementsPage, OwnStatementsPage, StatementPage } from './statements.js';

const page: PageContext = { csrf: 'token', signedIn: null };
const zone = 'UTC';
const names = new Map([['user:1', 'Olive Operator']]);

const summary = (fields: Partial<StatementSummaryView>): StatementSummaryView => ({
  id: 7,
  kind: 'partner',
  accountId: 1,
  accountName: 'Harbour News',
  month: '2026-10',
  periodStart: '2026-10-01T00:00:00.000Z',
  periodEnd: '2026-11-01T00:00:00.000Z',
  currency: 'USD',
  issuedAt: '2026-11-02T09:30:00.000Z',
  issuedBy: 'user:1',
  subtotalMicros: 1_234_567_890,
  adjustmentsMicros: -12_500_000,
  openingBalanceMicros: 3_000_000,
  totalMicros: 1_225_067_890,
  payableMicros: 1_225_067_890,
  carriedForwardMicros: 0,
  payment: null,
  ...fields,
});

const line = (fields: Partial<StatementLineView>): StatementLineView => ({
  kind: 'placement_key',
  campaignId: null,
  campaignName: null,
  placementId: 'header_banner',
  apiKeyId: 4,
  apiKeyName: 'Production',
  impressions: 12_000,
  clicks: 30,
  invalidImpressions: 17,
  invalidClicks: 2,
  amountMicros: 1_234_567_890,
  adjustmentId: null,
  reason: null,
  ...fields,
});

const statement = (fields: Partial<StatementView> = {}): StatementView => ({
  ...summary({}),
  lines: [
    line({}),
    line({
      kind: 'adjustment',
      placementId: null,
      apiKeyId: null,
      apiKeyName: null,
      impressions: 0,
      clicks: 0,
    }),
  ].map((each, index) =>
    index === 1
      ? { ...each, adjustmentId: 3, reason: 'Refund <b>bot</b> traffic', amountMicros: -12_500_000 }
      : each,
  ),
  ...fields,
});

const html = (node: Parameters<typeof render>[0]) => render(node);

describe('the statement pages', () => {
  it('names a month in words', () => {
    expect(monthName('2026-10')).toBe('October 2026');
    expect(monthName('2027-01')).toBe('January 2027');
  });

  it('shows a partner statement: lines with invalid counts, sums right-aligned in the currency, and the payout form', () => {
    const body = html(
      StatementPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        statement: statement(),
        names,
        canPay: true,
      }),
    );
    expect(body).toContain('Partner statement: Harbour News, October 2026');
    expect(body).toContain('2026-11-02 09:30 UTC by Olive Operator');
    expect(body).toContain('header_banner · Production');
    // Invalid traffic as counts, the amount in the currency's decimals, right-aligned.
    expect(body).toMatch(/<td class="money" data-label="Invalid impressions">17<\/td>/);
    expect(body).toMatch(/<td class="money" data-label="Earnings \(USD\)">1,234.57<\/td>/);
    expect(body).toContain('Adjustment #3: Refund &lt;b>bot&lt;/b> traffic');
    expect(body).toMatch(/<th scope="row">Opening balance<\/th><td class="money">3.00<\/td>/);
    expect(body).toMatch(/<th scope="row">Payable<\/th><td class="money"><strong>1,225.07<\/strong><\/td>/);
    expect(body).toContain('action="/statements/7/payment"');
    expect(body).toContain('>Mark paid</button>');
    expect(body).toContain('href="/statements/7.csv"');
    // Nothing on the page changes an issued figure: its only form is the payout's (and signing out, not here).
    expect(body.match(/<form /g)).toHaveLength(1);
  });

  it('shows a paid statement’s payment instead of the form, and a reader’s without it', () => {
    const paid = statement({
      payment: { reference: 'TRF-0042', paidAt: '2026-11-05T10:00:00.000Z', paidBy: 'user:1' },
    });
    const body = html(
      StatementPage({ page, currency: 'USD', billingTimeZone: zone, statement: paid, names, canPay: true }),
    );
    expect(body).toContain('TRF-0042');
    expect(body).toContain('2026-11-05 10:00 UTC');
    expect(body).not.toContain('<form');
    const reader = html(
      StatementPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        statement: statement(),
        names: new Map(),
        canPay: false,
      }),
    );
    expect(reader).toContain('Payable, not paid yet.');
    expect(reader).toContain('by the operator');
    expect(reader).not.toContain('<form');
  });

  it('says why a partner below the minimum payout is paid nothing, and an advertiser’s has no payout', () => {
    const below = statement({ payableMicros: 0, carriedForwardMicros: 1_225_067_890 });
    expect(
      html(
        StatementPage({
          page,
          currency: 'USD',
          billingTimeZone: zone,
          statement: below,
          names,
          canPay: true,
        }),
      ),
    ).toContain('below the minimum payout');
    const advertiser = statement({
      kind: 'advertiser',
      accountName: 'Acme',
      lines: [
        line({
          kind: 'campaign',
          campaignId: 9,
          campaignName: 'Autumn sale',
          placementId: null,
          apiKeyId: null,
        }),
      ],
    });
    const body = html(
      StatementPage({
        page,
        currency: 'JPY',
        billingTimeZone: zone,
        statement: advertiser,
        names,
        canPay: true,
      }),
    );
    expect(body).toContain('Autumn sale (#9)');
    expect(body).not.toContain('Invalid impressions');
    expect(body).not.toContain('Payout');
    // JPY has no decimals.
    expect(body).toMatch(/<td class="money" data-label="Spend \(JPY\)">1,235<\/td>/);
  });

  it('lists the operator’s months with the next to issue, and the month’s statements by account', () => {
    const months = [
      { month: '2026-09', closed: true, issued: true, nextToIssue: false },
      { month: '2026-10', closed: true, issued: false, nextToIssue: true },
      { month: '2026-11', closed: false, issued: false, nextToIssue: false },
    ];
    const body = html(
      OperatorStatementsPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        months,
        month: '2026-09',
        statements: [
          summary({ month: '2026-09' }),
          summary({ id: 8, kind: 'advertiser', accountName: 'Acme' }),
        ],
        canChange: true,
      }),
    );
    expect(body).toContain('href="/statements/issue?month=2026-10"');
    expect(body).toContain('Issue statements for October 2026');
    expect(body).not.toContain('November 2026');
    expect(body).toContain('Statements for September 2026');
    expect(body).toContain('<a href="/statements/8">Acme</a>');
    expect(body).toContain('Payable, not paid yet');
    const empty = html(
      OperatorStatementsPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        months: [],
        month: undefined,
        statements: [],
        canChange: true,
      }),
    );
    expect(empty).toContain('No statements yet.');
    expect(empty).toContain('No month with money in it has closed yet');
  });

  it('lists an account’s own statements by month', () => {
    const body = html(
      OwnStatementsPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        kind: 'partner',
        accountName: 'Harbour News',
        statements: [
          summary({ payment: { reference: 'R', paidAt: '2026-11-05T10:00:00.000Z', paidBy: 'user:1' } }),
        ],
      }),
    );
    expect(body).toContain('Statements and payouts');
    expect(body).toContain('<a href="/statements/7">October 2026</a>');
    expect(body).toContain('Paid 2026-11-05 10:00 UTC');
  });

  it('shows the adjustments form and list, with what each was carried on, and keeps a refused form as typed', () => {
    const adjustments: AdjustmentView[] = [
      {
        id: 3,
        kind: 'partner',
        accountId: 1,
        accountName: 'Harbour News',
        amountMicros: -12_500_000,
        reason: 'Refund bot traffic',
        createdAt: '2026-11-01T08:00:00.000Z',
        createdBy: 'user:1',
        carriedOnStatementId: 7,
      },
      {
        id: 4,
        kind: 'advertiser',
        accountId: 2,
        accountName: 'Acme',
        amountMicros: 5_000_000,
        reason: 'Late fee',
        createdAt: '2026-11-03T08:00:00.000Z',
        createdBy: 'user:1',
        carriedOnStatementId: null,
      },
    ];
    const body = html(
      AdjustmentsPage({
        page,
        currency: 'USD',
        billingTimeZone: zone,
        advertisers: [{ value: 'advertiser:2', name: 'Acme' }],
        partners: [{ value: 'partner:1', name: 'Harbour News' }],
        adjustments,
        names,
        canChange: true,
        refused: {
          action: '/adjustments',
          problem: 'invalid adjustment',
          fields: { account: 'partner:1', amount: '1.2.3', reason: 'x' },
          problems: [{ field: 'amount', message: 'must be an amount such as 1,000.25' }],
        },
      }),
    );
    expect(body).toContain('<a href="/statements/7">On statement #7</a>');
    expect(body).toContain('Not yet: on the next statement');
    expect(body).toMatch(/<td class="money" data-label="Amount \(USD\)">-12.50<\/td>/);
    expect(body).toContain('<option value="partner:1" selected>Harbour News</option>');
    expect(body).toContain('value="1.2.3"');
    expect(body).toContain('Amount (USD) must be an amount such as 1,000.25');
  });
});
