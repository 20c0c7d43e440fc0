import { formatMoney, formatMoneyWithCode, type Micros } from '../../../domain/money.js';
import { DATES, DATES_LABEL, REPORT_WINDOW_LABELS, REPORT_WINDOWS } from '../../../domain/report-windows.js';
import { localPeriod } from '../../../domain/time-zones.js';
import type { Figures, FiguresQuery } from '../../../services/live-figures.js';
import type { ReportCounts } from '../../../services/reports.js';
import { Layout, Problem, type PageContext } from './layout.js';

/** Seconds between two refreshes of the live figures: events show within 5 s of their answer (D14). */
export const REFRESH_SECONDS = 2;

const NAMES: Record<string, string> = {
  advertiser: 'Advertiser',
  partner: 'Partner',
  campaign: 'Campaign',
  placement: 'Placement',
  country: 'Country',
  device: 'Device',
  reason: 'Reason not billed',
};
const PERIOD_WORD = { minute: 'minute', hour: 'hour', day: 'day' } as const;

const number = new Intl.NumberFormat('en-US');
const ctr = (counts: ReportCounts) => (counts.ctr === null ? '–' : `${(counts.ctr * 100).toFixed(2)}%`);
const notBilled = (counts: ReportCounts) => counts.nonBillableImpressions + counts.nonBillableClicks;
/** The share of billable impressions that named a viewer: what frequency caps could count (D20). */
const viewerShare = (counts: ReportCounts) =>
  counts.viewerShare === null ? '–' : `${(counts.viewerShare * 100).toFixed(1)}%`;
/** `2026-03-29T10:17+02:00` as `2026-03-29 10:17`: the caption names the time zone. */
const periodText = (label: string) => label.slice(0, 16).replace('T', ' ');

/** The query string of a report page, for its live fragment, its CSV export and its links. */
export function reportQueryString(query: FiguresQuery): string {
  const params = new URLSearchParams({ window: query.window });
  if (query.window === DATES) {
    params.set('from', query.from ?? '');
    params.set('to', query.to ?? '');
  }
  params.set('breakdown', query.breakdown);
  params.set('timeZone', query.timeZone);
  if (query.campaign !== undefined) params.set('campaign', query.campaign);
  if (query.placement !== undefined) params.set('placement', query.placement);
  return params.toString();
}

/** An amount with its currency's decimals, `–` where there is none (eCPM without impressions). */
function Money(props: { micros: Micros | null; currency: string }) {
  return (
    <td class="money" {...(props.micros !== null && { 'data-micros': props.micros })}>
      {props.micros === null ? '–' : formatMoney(props.micros, props.currency)}
    </td>
  );
}

function Counts({ counts }: { counts: ReportCounts }) {
  // Impressions and clicks first: the chart script reads them from the second and third cells.
  return (
    <>
      <td data-value={counts.impressions}>{number.format(counts.impressions)}</td>
      <td data-value={counts.clicks}>{number.format(counts.clicks)}</td>
      <td>{ctr(counts)}</td>
      <td>{number.format(notBilled(counts))}</td>
      <td>{viewerShare(counts)}</td>
      <Money micros={counts.spendMicros} currency={counts.currency} />
      <Money micros={counts.ecpmMicros} currency={counts.currency} />
      <Money micros={counts.ecpcMicros} currency={counts.currency} />
      {shared(counts).map(([field]) => (
        <Money key={field} micros={counts[field] ?? null} currency={counts.currency} />
      ))}
    </>
  );
}

const COUNT_HEADERS = ['Impressions', 'Clicks', 'Click-through rate', 'Not billed', 'With a viewer'];
/** The amounts' headers, each followed by the currency. */
const MONEY_HEADERS = ['Spend', 'eCPM', 'eCPC'];
/** The amounts only some accounts read (the report leaves out the others'), with their headers. */
const SHARED_AMOUNTS = [
  ['earningsMicros', 'Partner earnings'],
  ['marginMicros', 'Margin'],
] as const;
const shared = (counts: ReportCounts) => SHARED_AMOUNTS.filter(([field]) => field in counts);

const percent = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });
const points = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  signDisplay: 'exceptZero',
});

/** How a count changed on the previous period's, in percent of that one. */
export function change(now: number, before: number): string {
  if (before === 0) return now === 0 ? 'no change' : 'none before';
  return `${percent.format(((now - before) / before) * 100)}%`;
}

/** How the click-through rate changed, in percentage points (a change in % of a rate misleads). */
function ctrChange(now: ReportCounts, before: ReportCounts): string {
  if (now.ctr === null || before.ctr === null) return '–';
  return `${points.format((now.ctr - before.ctr) * 100)} points`;
}

/** A span of time as a reader reads it: dates for whole days, local times for the others. */
function spanText(span: { from: number; to: number; days?: number }, timeZone: string): string {
  if (span.days !== undefined) {
    const first = localPeriod(span.from, 'day', timeZone);
    const last = localPeriod(span.to - 1, 'day', timeZone);
    return first === last ? first : `${first} to ${last}`;
  }
  const at = (ms: number) => periodText(localPeriod(ms, 'minute', timeZone));
  return `${at(span.from)} to ${at(span.to)}`;
}

/** One total of the report, with its value in the previous period and the change. */
function Total(props: {
  name: string;
  total?: string;
  value: string;
  change: string;
  before: string;
  money?: boolean;
}) {
  return (
    <div>
      <dt>{props.name}</dt>
      <dd data-total={props.total} {...(props.money && { class: 'money' })}>
        {props.value}
      </dd>
      <dd class="change" data-change={props.total}>
        {props.change} <span class="note">(previous period: {props.before})</span>
      </dd>
    </div>
  );
}

/**
 * The live part of a report page: totals, the chart and the same numbers as a table, and the
 * breakdown. It asks for itself again every few seconds (htmx) and is replaced whole; the chart
 * script draws from the table, so the chart can only show the table's numbers.
 */
export function LiveFigures(props: { figures: Figures; updatedAt: string; emptyHint: string }) {
  const { figures } = props;
  const { query, totals } = figures;
  const per = PERIOD_WORD[figures.plan.granularity];
  const breakdownName = NAMES[query.breakdown] ?? query.breakdown;
  const before = figures.previous.totals;
  const quiet = totals.impressions + totals.clicks + notBilled(totals) === 0;
  const count = (now: number, then: number) => ({
    value: number.format(now),
    change: change(now, then),
    before: number.format(then),
  });
  return (
    <section
      id="live-figures"
      aria-label="Figures"
      // A report that ended shows the same figures at every load: only a current one refreshes.
      {...(figures.live && {
        'hx-get': `/reports/figures?${reportQueryString(query)}`,
        'hx-trigger': `every ${REFRESH_SECONDS}s`,
        'hx-swap': 'outerHTML',
      })}
    >
      <p class="period">
        {spanText(figures.plan, query.timeZone)} ({query.timeZone}), compared with the period of the same
        length before it, {spanText(figures.previous, query.timeZone)}.
      </p>
      <dl class="totals">
        <Total name="Impressions" total="impressions" {...count(totals.impressions, before.impressions)} />
        <Total name="Clicks" total="clicks" {...count(totals.clicks, before.clicks)} />
        <Total
          name="Click-through rate"
          value={ctr(totals)}
          change={ctrChange(totals, before)}
          before={ctr(before)}
        />
        <Total name="Not billed" total="not-billed" {...count(notBilled(totals), notBilled(before))} />
        <Total
          name="Spend"
          total="spend"
          money
          value={formatMoneyWithCode(totals.spendMicros, totals.currency)}
          change={change(totals.spendMicros, before.spendMicros)}
          before={formatMoneyWithCode(before.spendMicros, before.currency)}
        />
        {shared(totals).map(([field, name]) => {
          const [now, then] = [totals[field] ?? 0, before[field] ?? 0];
          return (
            <Total
              key={field}
              name={name}
              total={field === 'earningsMicros' ? 'earnings' : 'margin'}
              money
              value={formatMoneyWithCode(now as Micros, totals.currency)}
              change={change(now, then)}
              before={formatMoneyWithCode(then as Micros, before.currency)}
            />
          );
        })}
      </dl>
      <p class="note">
        Billable events only, except “not billed” (repeated requests and other events that are answered but
        never charged). Amounts in {totals.currency}; eCPM is the spend per thousand impressions, eCPC per
        click
        {'earningsMicros' in totals && '; partner earnings are the partners’ shares of the spend'}
        {'marginMicros' in totals && ', and the margin what remains'}. Updated {props.updatedAt}
        {figures.live && <span class="live-note"> · refreshes every {REFRESH_SECONDS} seconds</span>}.
      </p>
      {quiet && <p class="empty">{props.emptyHint}</p>}
      <div class="legend" aria-hidden="true">
        <span class="key key-impressions">Impressions</span> <span class="key key-clicks">Clicks</span>
      </div>
      <div
        class="chart"
        data-chart="series"
        data-time-zone={query.timeZone}
        data-granularity={figures.plan.granularity}
        role="img"
        aria-label={`Chart of impressions and clicks by ${per}; the table below has the same numbers`}
      ></div>
      <div class="table-wrap tall" tabIndex={0} role="region" aria-label={`Figures by ${per}`}>
        <table id="series">
          <caption>
            By {per}, newest first ({query.timeZone})
          </caption>
          <thead>
            <tr>
              <th scope="col">{per === 'day' ? 'Day' : per === 'hour' ? 'Hour' : 'Minute'}</th>
              <CountHeaders totals={totals} />
            </tr>
          </thead>
          <tbody>
            {[...figures.series].reverse().map((period) => (
              <tr key={period.start} data-start={period.start}>
                <th scope="row">{periodText(period.label)}</th>
                <Counts counts={period.counts} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>By {breakdownName.toLowerCase()}</h2>
      {figures.breakdown.length === 0 ? (
        <p class="empty">Nothing to break down yet.</p>
      ) : (
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`Figures by ${breakdownName}`}>
          <table>
            <caption>
              {figures.more > 0
                ? `The ${figures.breakdown.length} with the most impressions; ${figures.more} more in the CSV`
                : `Every ${breakdownName.toLowerCase()} with events`}
            </caption>
            <thead>
              <tr>
                <th scope="col">{breakdownName}</th>
                <CountHeaders totals={totals} />
              </tr>
            </thead>
            <tbody>
              {figures.breakdown.map((row) => (
                <tr key={String(row.value)}>
                  <th scope="row">{row.name}</th>
                  <Counts counts={row.counts} />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The column headers of the counts and amounts every table of the report shows (see `Counts`). */
function CountHeaders(props: { totals: ReportCounts }) {
  return (
    <>
      {COUNT_HEADERS.map((header) => (
        <th scope="col" key={header}>
          {header}
        </th>
      ))}
      {[...MONEY_HEADERS, ...shared(props.totals).map(([, header]) => header)].map((header) => (
        <th scope="col" class="money" key={header}>
          {header} ({props.totals.currency})
        </th>
      ))}
    </>
  );
}

/** A choice of the report form, the current one selected. */
function Choice(props: {
  name: string;
  label: string;
  value: string | undefined;
  options: Array<[string, string]>;
}) {
  return (
    <div>
      <label for={`report-${props.name}`}>{props.label}</label>
      <select id={`report-${props.name}`} name={props.name}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value} selected={value === (props.value ?? '')}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * The campaign to narrow the report to, by its number: any campaign the person sees can be typed
 * (a list of every one would not fit a page), and the browser suggests the newest, titles beside
 * their numbers (a datalist: no script needed). Empty is every campaign.
 */
function CampaignField(props: {
  value: string | undefined;
  campaigns: Array<{ id: number; title: string }>;
}) {
  return (
    <div>
      <label for="report-campaign">Campaign</label>
      <input
        id="report-campaign"
        name="campaign"
        value={props.value ?? ''}
        list="report-campaigns"
        inputMode="numeric"
        placeholder="Every campaign"
        aria-describedby="report-campaign-hint"
      />
      <datalist id="report-campaigns">
        {props.campaigns.map((c) => (
          <option key={c.id} value={String(c.id)}>{`${c.title} (#${c.id})`}</option>
        ))}
      </datalist>
      <p class="hint" id="report-campaign-hint">
        Its number (#), as Campaigns shows it; every campaign's page also links to its report.
      </p>
    </div>
  );
}

/**
 * A date of the form's span, in the report's time zone: the browser's date picker, or typed as
 * `YYYY-MM-DD` where there is none. It shows the dates of the report on the page, whatever its period.
 */
function DateField(props: { name: 'from' | 'to'; label: string; value: string }) {
  return (
    <div>
      <label for={`report-${props.name}`}>{props.label}</label>
      <input
        id={`report-${props.name}`}
        name={props.name}
        type="date"
        value={props.value}
        aria-describedby="report-dates-hint"
      />
      {props.name === 'from' && (
        <p class="hint" id="report-dates-hint">
          Local days, for “{DATES_LABEL}”.
        </p>
      )}
    </div>
  );
}

/**
 * The report's address with every choice in its query string, to bookmark or send: it opens the
 * same report. A copy button where scripts run (copy.js); without them, the field is selected and
 * copied by hand.
 */
function ReportLink(props: { url: string; rolling: boolean }) {
  return (
    <>
      <div class="secret report-link">
        <label for="report-link">Link to this report</label>
        <input id="report-link" readonly value={props.url} class="mono" aria-describedby="report-link-hint" />
        <button type="button" id="copy-key" data-copy="report-link" hidden>
          Copy link
        </button>
        <span id="copy-status" role="status"></span>
      </div>
      <p class="hint" id="report-link-hint">
        {props.rolling
          ? 'It shows the same period up to the moment it is opened; for fixed days, choose the dates.'
          : 'It opens these dates with the same choices.'}{' '}
        <a href={props.url}>Open the link</a>
      </p>
      <script src="/assets/copy.js" defer></script>
    </>
  );
}

/** A live report: what to show (a form that works without scripts), the figures, the CSV export. */
export function ReportsPage(props: {
  page: PageContext;
  title: string;
  query: FiguresQuery;
  breakdowns: readonly string[];
  /** The newest campaigns the person may narrow the report to, suggested (none for a partner). */
  campaigns: Array<{ id: number; title: string }>;
  placements: string[];
  figures?: Figures;
  updatedAt: string;
  emptyHint: string;
  problem?: string;
  /** Where the dashboard is reached (`PLACARD_PUBLIC_URL`), for the report's link. */
  publicUrl: string;
}) {
  const { query } = props;
  const dates = props.figures?.dates ?? { from: query.from ?? '', to: query.to ?? '' };
  const link = `${props.publicUrl.replace(/\/+$/, '')}/reports?${reportQueryString(query)}`;
  return (
    <Layout
      title={props.title}
      page={props.page}
      current="/reports"
      scripts={['/assets/live-figures.js']}
      styles={['/assets/live-figures.css']}
    >
      <Problem message={props.problem} />
      <form method="get" action="/reports" class="filters">
        <Choice
          name="window"
          label="Period"
          value={query.window}
          options={[
            ...REPORT_WINDOWS.map((window): [string, string] => [window, REPORT_WINDOW_LABELS[window]]),
            [DATES, DATES_LABEL],
          ]}
        />
        <DateField name="from" label="From" value={dates.from} />
        <DateField name="to" label="To" value={dates.to} />
        <Choice
          name="breakdown"
          label="Break down by"
          value={query.breakdown}
          options={props.breakdowns.map((dimension) => [dimension, NAMES[dimension] ?? dimension])}
        />
        {props.campaigns.length > 0 && <CampaignField value={query.campaign} campaigns={props.campaigns} />}
        <Choice
          name="placement"
          label="Placement"
          value={query.placement}
          options={[['', 'Every placement'], ...props.placements.map((id): [string, string] => [id, id])]}
        />
        <div>
          <label for="report-timeZone">Time zone</label>
          <input id="report-timeZone" name="timeZone" value={query.timeZone} />
        </div>
        <button type="submit">Show</button>
      </form>
      {props.figures && (
        <>
          <p>
            <a href={`/reports.csv?${reportQueryString(query)}`} download>
              Download CSV
            </a>{' '}
            <span class="note">
              (every row of this report, by {PERIOD_WORD[props.figures.plan.granularity]})
            </span>
          </p>
          <ReportLink url={link} rolling={query.window !== DATES} />
          <LiveFigures figures={props.figures} updatedAt={props.updatedAt} emptyHint={props.emptyHint} />
        </>
      )}
    </Layout>
  );
}
