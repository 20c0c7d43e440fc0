// The live figures of a report page: htmx asks the server for the figures again every few
// seconds and swaps them in (see pages/reports.tsx); this draws the chart from the table that
// came with them, so the chart always shows the table's numbers. Without scripts, the table and
// a reload do the same job.
import 'htmx.org';
import uPlot from 'uplot';

const COLOURS = { impressions: '#1f5fbf', clicks: '#b5461a' };

/** The table's periods and counts, oldest first, as uPlot wants them (seconds on x). */
function readTable(table: HTMLTableElement): uPlot.AlignedData {
  const rows = [...(table.tBodies[0]?.rows ?? [])]
    .map((row) => ({
      at: Number(row.dataset['start']) / 1000,
      impressions: Number(row.cells[1]?.dataset['value'] ?? 0),
      clicks: Number(row.cells[2]?.dataset['value'] ?? 0),
    }))
    .sort((a, b) => a.at - b.at);
  return [rows.map((r) => r.at), rows.map((r) => r.impressions), rows.map((r) => r.clicks)];
}

function draw(): void {
  const holder = document.querySelector<HTMLElement>('[data-chart]');
  const table = holder && document.getElementById(holder.dataset['chart'] ?? '');
  if (!holder || !(table instanceof HTMLTableElement)) return;
  const data = readTable(table);
  const timeZone = holder.dataset['timeZone'] ?? 'UTC';
  const byDay = holder.dataset['granularity'] === 'day';
  // A 24-hour clock (or the day), in the report's time zone, whatever the browser's locale.
  const label = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    ...(byDay
      ? { day: 'numeric', month: 'short' }
      : { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
  });
  holder.replaceChildren();
  new uPlot(
    {
      width: Math.max(280, holder.clientWidth),
      height: 220,
      legend: { show: false }, // the page has its own legend, and the table reads better than uPlot's
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timeZone),
      scales: { x: { time: true }, impressions: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      series: [
        {},
        { label: 'Impressions', stroke: COLOURS.impressions, width: 2, scale: 'impressions' },
        { label: 'Clicks', stroke: COLOURS.clicks, width: 2, scale: 'clicks' },
      ],
      axes: [
        {
          values: (_u, splits) => splits.map((seconds) => label.format(seconds * 1000)),
          // Whole days between ticks on a chart by day, so no two ticks carry the same date.
          ...(byDay && { incrs: [86_400, 2 * 86_400, 7 * 86_400, 14 * 86_400] }),
        },
        { scale: 'impressions', stroke: COLOURS.impressions },
        { scale: 'clicks', side: 1, stroke: COLOURS.clicks, grid: { show: false } },
      ],
    },
    data,
    holder,
  );
  // What the chart shows, for people's tools and the tests: the totals it drew.
  const [, impressions, clicks] = data as [number[], number[], number[]];
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  holder.dataset['drawn'] = `${sum(impressions)} impressions, ${sum(clicks)} clicks`;
}

/** Says so beside the figures when a refresh failed; the next one tries again by itself. */
function showPaused(): void {
  const note = document.querySelector('#live-figures .live-note');
  if (note) note.textContent = ' · live refresh paused: the server did not answer; retrying';
}

document.addEventListener('DOMContentLoaded', draw);
document.addEventListener('htmx:after:settle', draw);
document.addEventListener('htmx:error', showPaused);
let resizing: number | undefined;
window.addEventListener('resize', () => {
  window.clearTimeout(resizing);
  resizing = window.setTimeout(draw, 150);
});
