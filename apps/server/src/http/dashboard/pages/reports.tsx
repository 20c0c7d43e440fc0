import { REPORT_WINDOW_LABELS, REPORT_WINDOWS } from '../../../domain/report-windows.js';
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
/** `2026-03-29T10:17+02:00` as `2026-03-29 10:17`: the caption names the time zone. */
const periodText = (label: string) => label.slice(0, 16).replace('T', ' ');

/** The query string of a report page, for its live fragment, its CSV export and its links. */
export function reportQueryString(query: FiguresQuery): string {
  const params = new URLSearchParams({
    window: query.window,
    breakdown: query.breakdown,
    timeZone: query.timeZone,
  });
  if (query.campaign !== undefined) params.set('campaign', query.campaign);
  if (query.placement !== undefined) params.set('placement', query.placement);
  return params.toString();
}

function Counts({ counts }: { counts: ReportCounts }) {
  return (
    <>
      <td data-value={counts.impressions}>{number.format(counts.impressions)}</td>
      <td data-value={counts.clicks}>{number.format(counts.clicks)}</td>
      <td>{ctr(counts)}</td>
      <td>{number.format(notBilled(counts))}</td>
    </>
  );
}

const COUNT_HEADERS = ['Impressions', 'Clicks', 'Click-through rate', 'Not billed'];

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
  const quiet = totals.impressions + totals.clicks + notBilled(totals) === 0;
  return (
    <section
      id="live-figures"
      aria-label="Figures"
      hx-get={`/reports/figures?${reportQueryString(query)}`}
      hx-trigger={`every ${REFRESH_SECONDS}s`}
      hx-swap="outerHTML"
    >
      <dl class="totals">
        <div>
          <dt>Impressions</dt>
          <dd data-total="impressions">{number.format(totals.impressions)}</dd>
        </div>
        <div>
          <dt>Clicks</dt>
          <dd data-total="clicks">{number.format(totals.clicks)}</dd>
        </div>
        <div>
          <dt>Click-through rate</dt>
          <dd>{ctr(totals)}</dd>
        </div>
        <div>
          <dt>Not billed</dt>
          <dd>{number.format(notBilled(totals))}</dd>
        </div>
      </dl>
      <p class="note">
        Billable events only, except “not billed” (repeated requests and other events that are answered but
        never charged). Updated {props.updatedAt}
        <span class="live-note"> · refreshes every {REFRESH_SECONDS} seconds</span>.
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
              <CountHeaders />
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
                <CountHeaders />
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

/** The column headers of the counts every table of the report shows (see `Counts`). */
function CountHeaders() {
  return (
    <>
      {COUNT_HEADERS.map((header) => (
        <th scope="col" key={header}>
          {header}
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

/** A live report: what to show (a form that works without scripts), the figures, the CSV export. */
export function ReportsPage(props: {
  page: PageContext;
  title: string;
  query: FiguresQuery;
  breakdowns: readonly string[];
  /** Campaigns the person may narrow the report to (none for a partner). */
  campaigns: Array<{ id: number; title: string }>;
  placements: string[];
  figures?: Figures;
  updatedAt: string;
  emptyHint: string;
  problem?: string;
}) {
  const { query } = props;
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
          options={REPORT_WINDOWS.map((window) => [window, REPORT_WINDOW_LABELS[window]])}
        />
        <Choice
          name="breakdown"
          label="Break down by"
          value={query.breakdown}
          options={props.breakdowns.map((dimension) => [dimension, NAMES[dimension] ?? dimension])}
        />
        {props.campaigns.length > 0 && (
          <Choice
            name="campaign"
            label="Campaign"
            value={query.campaign}
            options={[
              ['', 'Every campaign'],
              ...props.campaigns.map((c): [string, string] => [String(c.id), `${c.title} (#${c.id})`]),
            ]}
          />
        )}
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
          <LiveFigures figures={props.figures} updatedAt={props.updatedAt} emptyHint={props.emptyHint} />
        </>
      )}
    </Layout>
  );
}
