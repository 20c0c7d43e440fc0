import { Fragment } from 'preact';
import { formatMoney, type Micros } from '../../../domain/money.js';
import type {
  StatementKind,
  StatementLineView,
  StatementMonthView,
  StatementSummaryView,
  StatementView,
} from '../../../services/statement-views.js';
import { whenIn } from './format.js';
import { CsrfField, Layout, Problem, type PageContext, type Refused } from './layout.js';
import { ListTable, typed, type Column } from './parts.js';
import { FieldMessage, fieldIdOf, invalidAttributes, wordProblems } from './form-problems.js';

/** `2026-10` as people read it: "October 2026" (the month of the billing time zone it names). */
export function monthName(month: string): string {
  const [year, number] = month.split('-').map(Number);
  return new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    Date.UTC(year!, number! - 1, 1),
  );
}

/**
 * Columns of amounts in `currency`, for rows of one type: each in the currency's decimals,
 * right-aligned in digits of one width (`money`, dashboard.css), its header naming the currency.
 */
export const amountsIn =
  <Row,>(currency: string) =>
  (header: string, micros: (row: Row) => number): Column<Row> => ({
    header: `${header} (${currency})`,
    cell: (row) => formatMoney(micros(row) as Micros, currency),
    class: 'money',
  });

/** Who did something, by the audit log's name for them (the operator's people see names). */
export type Names = ReadonlyMap<string, string>;
const nameOf = (names: Names, actor: string): string => names.get(actor) ?? 'the operator';

/** Whether a partner's statement was paid, is waiting to be, or had nothing to pay. */
function paymentState(statement: StatementSummaryView, timeZone: string): string {
  if (statement.kind === 'advertiser') return '';
  if (statement.payment) return `Paid ${whenIn(Date.parse(statement.payment.paidAt), timeZone)}`;
  return statement.payableMicros > 0 ? 'Payable, not paid yet' : 'Below the minimum payout: carried forward';
}

const ACCOUNT_NOUNS: Record<StatementKind, [string, string]> = {
  advertiser: ['One advertiser statement', 'advertiser statements'],
  partner: ['One partner statement', 'partner statements'],
};

/**
 * A table of statements: by account for one month (the operator's view of a month), or by month
 * for one account (an advertiser's or a partner's own). Partners' statements add what was payable
 * and whether it was paid.
 */
function StatementTable(props: {
  kind: StatementKind;
  statements: readonly StatementSummaryView[];
  by: 'account' | 'month';
  currency: string;
  timeZone: string;
  label: string;
  empty: string;
}) {
  const { kind, currency } = props;
  const partner = kind === 'partner';
  const amount = amountsIn<StatementSummaryView>(currency);
  return (
    <div class="statement-list">
      <ListTable
        label={props.label}
        noun={ACCOUNT_NOUNS[kind]}
        rows={props.statements}
        empty={props.empty}
        columns={[
          {
            header: props.by === 'account' ? (partner ? 'Partner' : 'Advertiser') : 'Month',
            cell: (row) => (
              <a href={`/statements/${row.id}`}>
                {props.by === 'account' ? row.accountName : monthName(row.month)}
              </a>
            ),
          },
          amount('Subtotal', (row) => row.subtotalMicros),
          amount('Adjustments', (row) => row.adjustmentsMicros),
          partner && amount('Opening balance', (row) => row.openingBalanceMicros),
          amount('Total', (row) => row.totalMicros),
          partner && amount('Payable', (row) => row.payableMicros),
          partner && { header: 'Payout', cell: (row) => paymentState(row, props.timeZone) },
        ]}
      />
    </div>
  );
}

/** A month's two lists, advertisers then partners, and what each says when it has none. */
const MONTH_LISTS: ReadonlyArray<{ kind: StatementKind; heading: string; empty: string }> = [
  { kind: 'advertiser', heading: 'Advertisers', empty: 'No advertiser had spend or adjustments this month.' },
  {
    kind: 'partner',
    heading: 'Partners',
    empty: 'No partner had earnings, adjustments or a balance this month.',
  },
];

/** What the statements pages are given beyond the page itself. */
interface StatementsPageProps {
  page: PageContext;
  currency: string;
  billingTimeZone: string;
}

/**
 * The operator's statements (D18): the closed months, which are issued, the next to issue with its
 * button, and the statements of the month chosen, advertisers then partners.
 */
export function OperatorStatementsPage(
  props: StatementsPageProps & {
    months: readonly StatementMonthView[];
    /** The issued month shown, if any is. */
    month: string | undefined;
    statements: readonly StatementSummaryView[];
    /** Whether this person may issue (an admin or manager of the operator). */
    canChange: boolean;
    /** Why the month just asked for was not issued. */
    problem?: string | undefined;
  },
) {
  const closed = props.months.filter((month) => month.closed);
  const next = closed.find((month) => month.nextToIssue);
  const issued = closed.filter((month) => month.issued);
  return (
    <Layout title="Statements" page={props.page} current="/statements">
      <Problem message={props.problem} />
      <p class="hint">
        Each closed calendar month ({props.billingTimeZone}) gets one statement per advertiser (its spend) and
        one per partner (its earnings). Issued statements never change: a correction is an{' '}
        <a href="/adjustments">adjustment</a>, carried on the account's next statement.
      </p>
      {next ? (
        <div class="next-month">
          <p>
            <strong>{monthName(next.month)}</strong> has closed and is the next month to issue.
          </p>
          {props.canChange && (
            <a class="button" href={`/statements/issue?month=${next.month}`}>
              Issue statements for {monthName(next.month)}
            </a>
          )}
        </div>
      ) : (
        <p class="note">
          {closed.length === 0
            ? 'No month with money in it has closed yet: the first statements can be issued once it does.'
            : 'Every closed month is issued. The next can be issued once the current month closes.'}
        </p>
      )}
      <h2 class="section-title">Months</h2>
      <ListTable
        noun={['One closed month', 'closed months']}
        label="Closed months"
        rows={closed}
        empty="No closed month yet. Statements are issued for a month once it has ended in the billing time zone."
        columns={[
          { header: 'Month', cell: (month) => monthName(month.month) },
          {
            header: 'Statements',
            cell: (month) =>
              month.issued ? (
                <a
                  href={`/statements?month=${month.month}`}
                  aria-current={month.month === props.month || undefined}
                >
                  Issued: show them
                </a>
              ) : month.nextToIssue ? (
                'Next to issue'
              ) : (
                'Waiting for the months before it'
              ),
          },
        ]}
      />
      {props.month === undefined ? (
        <p class="empty">
          No statements yet.{' '}
          {next
            ? `Issue ${monthName(next.month)} above: each advertiser and partner gets its statement at once.`
            : 'Once a month with money in it closes, issue it here.'}
        </p>
      ) : (
        <>
          <h2 class="section-title">Statements for {monthName(props.month)}</h2>
          {issued.length > 1 && <p class="note">Choose another issued month in the table above.</p>}
          {MONTH_LISTS.map(({ kind, heading, empty }) => (
            <Fragment key={kind}>
              <h3>{heading}</h3>
              <StatementTable
                kind={kind}
                by="account"
                label={`${heading.slice(0, -1)} statements for ${monthName(props.month!)}`}
                statements={props.statements.filter((statement) => statement.kind === kind)}
                currency={props.currency}
                timeZone={props.billingTimeZone}
                empty={empty}
              />
            </Fragment>
          ))}
        </>
      )}
    </Layout>
  );
}

/** An advertiser's or a partner's own statements, newest first, and a partner's payouts with them. */
export function OwnStatementsPage(
  props: StatementsPageProps & {
    kind: StatementKind;
    accountName: string;
    statements: readonly StatementSummaryView[];
  },
) {
  const partner = props.kind === 'partner';
  return (
    <Layout title={partner ? 'Statements and payouts' : 'Statements'} page={props.page} current="/statements">
      <p class="hint">
        {partner
          ? `One statement a month for ${props.accountName}: what its traffic earned, adjustments, the balance carried from before, what is payable and when it was paid.`
          : `One statement a month for ${props.accountName}: what its campaigns spent, and any adjustments.`}{' '}
        A statement is issued by the operator after the month ends ({props.billingTimeZone}) and never
        changes.
      </p>
      <StatementTable
        kind={props.kind}
        by="month"
        label={`Statements of ${props.accountName}`}
        statements={props.statements}
        currency={props.currency}
        timeZone={props.billingTimeZone}
        empty="No statements yet. The operator issues them after each month ends; they appear here then."
      />
    </Layout>
  );
}

/** A line of a statement in words: its campaign, its placement and key, or its adjustment's reason. */
function lineName(line: StatementLineView): string {
  const campaign = `${line.campaignName ?? 'Campaign'} (#${line.campaignId})`;
  switch (line.kind) {
    case 'campaign':
      return campaign;
    case 'flat':
      return `${campaign}, flat price`;
    case 'placement_key':
      return `${line.placementId} · ${line.apiKeyName ?? `key #${line.apiKeyId}`}`;
    case 'adjustment':
      return `Adjustment #${line.adjustmentId}: ${line.reason}`;
  }
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A row of the statement's sums: its name and its amount, the last (what is owed) in bold. */
function SumRow(props: { label: string; micros: number; currency: string; strong?: boolean }) {
  const amount = formatMoney(props.micros as Micros, props.currency);
  return (
    <tr class={props.strong ? 'sum' : undefined}>
      <th scope="row">{props.label}</th>
      <td class="money">{props.strong ? <strong>{amount}</strong> : amount}</td>
    </tr>
  );
}

/**
 * One statement, as issued: who and what month, its lines, its sums and, for a partner's, its
 * payout, with the form that records it for the operator on a payable unpaid one. Prints without
 * the menu and the forms (dashboard.css). Nothing here changes an issued figure.
 */
export function StatementPage(
  props: StatementsPageProps & {
    statement: StatementView;
    names: Names;
    /** Whether this person may record the payout (an admin or manager of the operator). */
    canPay: boolean;
    refused?: Refused | undefined;
  },
) {
  const { statement: s, currency, billingTimeZone: zone } = props;
  const partner = s.kind === 'partner';
  const lines = s.lines.filter((line) => line.kind !== 'adjustment');
  const adjustments = s.lines.filter((line) => line.kind === 'adjustment');
  const amount = amountsIn<StatementLineView>(currency);
  const title = `${partner ? 'Partner' : 'Advertiser'} statement: ${s.accountName}, ${monthName(s.month)}`;
  return (
    <Layout title={title} page={props.page} current="/statements">
      <dl class="statement-head">
        <dt>{partner ? 'Partner' : 'Advertiser'}</dt>
        <dd>
          {s.accountName} (#{s.accountId})
        </dd>
        <dt>Month</dt>
        <dd>{monthName(s.month)}</dd>
        <dt>Period</dt>
        <dd>
          {whenIn(Date.parse(s.periodStart), zone)} to {whenIn(Date.parse(s.periodEnd), zone)}
        </dd>
        <dt>Issued</dt>
        <dd>
          {whenIn(Date.parse(s.issuedAt), zone)} by {nameOf(props.names, s.issuedBy)}
        </dd>
        <dt>Statement</dt>
        <dd>
          #{s.id}, amounts in {currency}
        </dd>
      </dl>
      <p class="no-print actions">
        <a class="button" href={`/statements/${s.id}.csv`} download>
          Download CSV
        </a>
        <span class="note">Your browser's Print gives a printable copy without the menu.</span>
      </p>
      <h2 class="section-title">{partner ? 'Earnings by placement and key' : 'Spend by campaign'}</h2>
      <ListTable
        label="Lines"
        noun={['One line', 'lines']}
        rows={lines}
        empty={partner ? 'No earnings this month.' : 'No spend this month.'}
        columns={[
          { header: partner ? 'Placement · key' : 'Campaign', cell: lineName },
          { header: 'Impressions', cell: (line) => count(line.impressions), class: 'money' },
          { header: 'Clicks', cell: (line) => count(line.clicks), class: 'money' },
          partner && {
            header: 'Invalid impressions',
            cell: (line) => count(line.invalidImpressions),
            class: 'money',
          },
          partner && { header: 'Invalid clicks', cell: (line) => count(line.invalidClicks), class: 'money' },
          amount(partner ? 'Earnings' : 'Spend', (line) => line.amountMicros),
        ]}
      />
      {partner && (
        <p class="note">Invalid traffic is counted here and never earns: its amount is not in the lines.</p>
      )}
      {adjustments.length > 0 && (
        <>
          <h2 class="section-title">Adjustments</h2>
          <ListTable
            label="Adjustments carried"
            noun={['One adjustment', 'adjustments']}
            rows={adjustments}
            empty=""
            columns={[
              { header: 'Adjustment', cell: lineName },
              amount('Amount', (line) => line.amountMicros),
            ]}
          />
        </>
      )}
      <h2 class="section-title">Totals</h2>
      <div class="table-wrap">
        <table class="sums">
          <caption>Totals in {currency}</caption>
          <tbody>
            <SumRow label="Subtotal" micros={s.subtotalMicros} currency={currency} />
            <SumRow label="Adjustments" micros={s.adjustmentsMicros} currency={currency} />
            {partner && (
              <SumRow label="Opening balance" micros={s.openingBalanceMicros} currency={currency} />
            )}
            <SumRow label="Total" micros={s.totalMicros} currency={currency} strong={!partner} />
            {partner && <SumRow label="Payable" micros={s.payableMicros} currency={currency} strong />}
            {partner && (
              <SumRow label="Carried forward" micros={s.carriedForwardMicros} currency={currency} />
            )}
          </tbody>
        </table>
      </div>
      {partner && <Payout {...props} />}
    </Layout>
  );
}

/** A partner statement's payout: paid (reference, when, by), the operator's form, or why there is none. */
function Payout(props: Parameters<typeof StatementPage>[0]) {
  const { statement: s, refused, page } = props;
  const action = `/statements/${s.id}/payment`;
  const id = fieldIdOf(action, 'reference');
  if (s.payment) {
    return (
      <section aria-labelledby="payout">
        <h2 class="section-title" id="payout">
          Payout
        </h2>
        <dl>
          <dt>Paid</dt>
          <dd>{whenIn(Date.parse(s.payment.paidAt), props.billingTimeZone)}</dd>
          <dt>Reference</dt>
          <dd class="mono">{s.payment.reference}</dd>
          <dt>Recorded by</dt>
          <dd>{nameOf(props.names, s.payment.paidBy)}</dd>
        </dl>
      </section>
    );
  }
  const message =
    refused?.action === action
      ? [...wordProblems(refused.problem, refused.problems, { reference: 'Reference' }).fields.values()].join(
          ' ',
        ) || undefined
      : undefined;
  return (
    <section aria-labelledby="payout">
      <h2 class="section-title" id="payout">
        Payout
      </h2>
      {s.payableMicros <= 0 ? (
        <p>Nothing is payable: the total is below the minimum payout and is carried to the next statement.</p>
      ) : !props.canPay ? (
        <p>Payable, not paid yet.</p>
      ) : (
        <>
          <p>Payable, not paid yet.</p>
          {refused?.action === action && message === undefined && <Problem message={refused.problem} />}
          <form method="post" action={action} class="stack">
            <CsrfField token={page.csrf} />
            <label for={id}>Payment reference</label>
            <input
              id={id}
              name="reference"
              required
              maxLength={200}
              placeholder="the bank transfer's id"
              value={typed(refused, action, 'reference')}
              {...invalidAttributes(id, message)}
            />
            <FieldMessage fieldId={id} message={message} />
            <button type="submit">Mark paid</button>
          </form>
        </>
      )}
    </section>
  );
}
