import { formatMoney, formatMoneyWithCode } from '../../../domain/money.js';
import { sharePercent } from '../../../domain/revenue-shares.js';
import type { MoneyFigures, MoneyLine, MonthSummary, MonthTotals } from '../../../services/money-summary.js';
import { Layout, Problem, type PageContext } from './layout.js';
import { ListTable, type Column } from './parts.js';

/** Seconds between two refreshes of a month that has not ended. */
export const MONEY_REFRESH_SECONDS = 5;

/** A margin in basis points as a percentage (`30.00%`), `–` without revenue. */
const marginPercent = (basisPoints: number | null): string =>
  basisPoints === null ? '–' : `${sharePercent(basisPoints)}%`;

/** `2026-03` as `March 2026`. */
export function monthName(month: string): string {
  return new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    Date.parse(`${month}-01T00:00:00Z`),
  );
}

/** The amount columns every table of the page has, after its first. */
function amountColumns<Row extends MoneyFigures>(currency: string): Array<Column<Row>> {
  const amount = (text: string, field: 'spendMicros' | 'earningsMicros' | 'marginMicros'): Column<Row> => ({
    header: `${text} (${currency})`,
    cell: (row) => formatMoney(row[field], currency),
    class: 'money',
  });
  return [
    amount('Revenue', 'spendMicros'),
    amount('Partner earnings', 'earningsMicros'),
    amount('Margin', 'marginMicros'),
    { header: 'Margin %', cell: (row) => marginPercent(row.marginBasisPoints), class: 'money' },
  ];
}

/**
 * The live part of the page: the month's totals and its figures by advertiser and by partner. A
 * month that has not ended asks for itself again every few seconds (htmx) and is replaced whole.
 */
export function MoneyFiguresSection(props: { summary: MonthSummary; updatedAt: string }) {
  const { summary } = props;
  const { totals, currency } = summary;
  const line = (kind: 'advertiser' | 'partner'): Array<Column<MoneyLine>> => [
    { header: kind === 'advertiser' ? 'Advertiser' : 'Partner', cell: (row) => row.name },
    ...amountColumns<MoneyLine>(currency),
  ];
  const empty = `Nothing was spent in ${monthName(summary.month)}${summary.live ? ' yet' : ''}. Revenue appears here as soon as partners report billable events of priced campaigns: set a price on a campaign (its page, or placard campaigns update <id> --price cpm:2.50) and a revenue share for each partner (Partners, then Revenue share).`;
  return (
    <section
      id="money-figures"
      aria-label={`Money in ${monthName(summary.month)}`}
      {...(summary.live && {
        'hx-get': `/money/figures?month=${summary.month}`,
        'hx-trigger': `every ${MONEY_REFRESH_SECONDS}s`,
        'hx-swap': 'outerHTML',
      })}
    >
      <dl class="totals">
        {(
          [
            ['Revenue', 'revenue', totals.spendMicros],
            ['Partner earnings (payouts owed)', 'earnings', totals.earningsMicros],
            ['Margin', 'margin', totals.marginMicros],
            ['Margin %', 'margin-percent', null],
          ] as const
        ).map(([name, total, amount]) => (
          <div key={total}>
            <dt>{name}</dt>
            {/* The exact amount beside the one shown, which is rounded to the currency's decimals:
                three shown amounts may be a cent apart from adding up, the exact ones never are. */}
            <dd class="money" data-total={total} {...(amount !== null && { 'data-micros': String(amount) })}>
              {amount === null
                ? marginPercent(totals.marginBasisPoints)
                : formatMoneyWithCode(amount, currency)}
            </dd>
          </div>
        ))}
      </dl>
      <p class="note">
        {monthName(summary.month)} in the billing time zone ({summary.timeZone}){summary.live && ', so far'}.
        Revenue is what advertisers spent on billable events; partner earnings are the partners’ revenue
        shares of it, owed to them; the margin is what remains. Updated {props.updatedAt}
        {summary.live && ` · refreshes every ${MONEY_REFRESH_SECONDS} seconds`}.
      </p>
      {totals.spendMicros === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <>
          {(['advertiser', 'partner'] as const).map((kind) => (
            <>
              <h2 class="section-title">By {kind}</h2>
              <ListTable
                noun={[`One ${kind}`, `${kind}s`]}
                label={`Money by ${kind}`}
                empty={`No ${kind}’s revenue this month.`}
                rows={kind === 'advertiser' ? summary.advertisers : summary.partners}
                columns={line(kind)}
              />
            </>
          ))}
        </>
      )}
    </section>
  );
}

/** The operator's money: a month's revenue, payouts and margin, and the months before it. */
export function MoneyPage(props: {
  page: PageContext;
  summary?: MonthSummary;
  months: MonthTotals[];
  month: string;
  updatedAt: string;
  problem?: string;
}) {
  const currency = props.summary?.currency ?? '';
  const monthColumns: Array<Column<MonthTotals>> = [
    {
      header: 'Month',
      cell: (row) =>
        row.month === props.month ? (
          <span aria-current="true">{monthName(row.month)}</span>
        ) : (
          <a href={`/money?month=${row.month}`}>{monthName(row.month)}</a>
        ),
    },
    ...amountColumns<MonthTotals>(currency),
  ];
  return (
    <Layout title="Money" page={props.page} current="/money" scripts={['/assets/live-figures.js']}>
      <Problem message={props.problem} />
      <form method="get" action="/money" class="filters">
        <div>
          <label for="month">Month</label>
          <input id="month" name="month" type="month" value={props.month} />
        </div>
        <div>
          <button type="submit">Show</button>
        </div>
      </form>
      {props.summary && <MoneyFiguresSection summary={props.summary} updatedAt={props.updatedAt} />}
      {props.months.length > 0 && (
        <>
          <h2 class="section-title">Months</h2>
          <ListTable
            noun={['One month', 'months']}
            label="Money by month"
            empty="No months yet."
            rows={props.months}
            columns={monthColumns}
          />
        </>
      )}
    </Layout>
  );
}
