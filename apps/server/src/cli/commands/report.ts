import type { Command } from 'commander';
import { parseReportRequest, REPORT_DIMENSIONS } from '../../domain/report-request.js';
import {
  COUNT_COLUMNS,
  reportCells,
  reportColumns,
  reportCsv,
  reportNames,
  reportTotals,
} from '../../services/report-format.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { ReportService } from '../../services/reports.js';
import { storeAction } from '../context.js';
import { renderTable } from '../table.js';
import { emit, type OutputOptions } from '../output.js';

interface ReportOptions extends OutputOptions {
  csv?: boolean;
  from?: string;
  to?: string;
  granularity?: string;
  timeZone?: string;
  groupBy?: string;
  campaign?: string;
  advertiser?: string;
  partner?: string;
  placement?: string;
  country?: string;
  device?: string;
  verdict?: string;
  reason?: string;
}

/** `placard report`: the same reports as GET /admin/v1/reports, as a table, JSON or CSV. */
export function registerReport(program: Command): void {
  storeAction(
    program
      .command('report')
      .description(
        'impressions, clicks, CTR, non-billable counts, spend, eCPM, eCPC, partner earnings and margin from the live rollups',
      )
      .option(
        '--from <when>',
        'start: YYYY-MM-DD (local midnight) or an ISO date-time with offset; default today',
      )
      .option('--to <when>', 'end (exclusive); a date includes that whole day; default now')
      .option('--granularity <unit>', 'minute, hour or day', 'day')
      .option('--time-zone <iana>', 'IANA time zone for periods and dates', 'UTC')
      .option('--group-by <dimensions>', `comma-separated: ${REPORT_DIMENSIONS.join(', ')}`)
      .option('--campaign <ids>', 'only these campaign ids (comma-separated)')
      .option('--advertiser <ids>', 'only these advertiser ids')
      .option('--partner <ids>', 'only these partner ids')
      .option('--placement <ids>', 'only these placements')
      .option('--country <codes>', 'only these countries (none: requests without a location)')
      .option('--device <devices>', 'only these devices (none: requests without a device)')
      .option('--verdict <verdicts>', 'only these verdicts: counted, duplicate, invalid')
      .option('--reason <reasons>', 'only these reasons (none: counted events, which have none)')
      .option('--csv', 'print CSV'),
    async ({ store, config }, options: ReportOptions) => {
      const { csv, json, ...params } = options;
      const report = await new ReportService(store, CLI_ACTOR, config.currency).run(
        parseReportRequest(params, Date.now()),
      );
      const names = await reportNames(store, CLI_ACTOR, report);
      if (csv && !json) {
        process.stdout.write(reportCsv(report, names));
        return;
      }
      const range = { from: new Date(report.from).toISOString(), to: new Date(report.to).toISOString() };
      emit(options, { ...report, ...range }, () => {
        console.log(`${range.from} to ${range.to} by ${report.granularity} (${report.timeZone})`);
        if (report.rows.length === 0) {
          console.log('(no events)');
          return;
        }
        // Period, dimensions and names on the left, counts and amounts on the right (digits and
        // decimal points under each other), the currency last, and a totals line.
        const columns = reportColumns(report);
        const firstFigure = columns.indexOf(COUNT_COLUMNS[0]);
        const figure = (index: number) => index >= firstFigure && index < columns.length - 1;
        process.stdout.write(
          renderTable(columns, reportCells(report, names), {
            alignRight: figure,
            rules: true,
            footer: reportTotals(report, names),
          }),
        );
      });
    },
  );
}
