import { Type } from 'typebox';
import { parseReportRequest, REPORT_DIMENSIONS } from '../../domain/report-request.js';
import { reportCsv } from '../../services/report-format.js';
import { One } from '../openapi/common.js';
import { operation, ref } from '../openapi/management.js';
import type { AdminContext } from './context.js';
import { wantsCsv } from './support.js';
import { query, type ManagementApp } from './typed-routes.js';

const reportSchema = {
  ...operation('report', 'Reports', {
    summary: 'Report impressions, clicks, CTR, spend, eCPM and eCPC',
    description:
      'Live, from per-minute rollups. JSON, or CSV with `format=csv` or `Accept: text/csv`. Filters take a comma-separated list; `none` matches an absent country or device, or an event without a reason (`counted`). See docs/reports.md for verdicts and reasons.',
    ok: [200, One(ref('Report'))],
    alsoAs: {
      'text/csv': Type.String({
        description:
          'A header line, then one line per row; sent as the attachment `placard-report.csv`. Each campaign, advertiser or partner id column is followed by its name (`campaignName`, `advertiserName`, `partnerName`), empty where the caller may not see it. `spend`, `eCPM` and `eCPC` are in units of the `currency` column with its decimals (`12345.68`), empty without impressions or clicks.',
      }),
    },
  }),
  querystring: query(
    Type.Object({
      from: Type.Optional(
        Type.String({
          description: 'A date (YYYY-MM-DD, in `timeZone`) or an ISO instant; default: start of today.',
        }),
      ),
      to: Type.Optional(Type.String({ description: 'A date (inclusive) or an ISO instant; default: now.' })),
      granularity: Type.Optional(
        Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day')], { default: 'day' }),
      ),
      timeZone: Type.Optional(Type.String({ default: 'UTC', description: 'IANA time zone.' })),
      groupBy: Type.Optional(
        Type.String({ description: `Comma-separated: ${REPORT_DIMENSIONS.join(', ')}.` }),
      ),
      format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
      ...Object.fromEntries(REPORT_DIMENSIONS.map((dimension) => [dimension, Type.Optional(Type.String())])),
    }),
  ),
};

/** GET /admin/v1/reports: live reports from the per-minute rollups, as JSON or CSV. */
export async function reportRoutes(app: ManagementApp, context: AdminContext): Promise<void> {
  app.get('/reports', { schema: reportSchema }, async (request, reply) => {
    const actor = context.actor(request);
    const reports = context.services.reports(actor);
    const csv = wantsCsv(request.query.format, request.headers.accept);
    const report = await reports.run(parseReportRequest(request.query, context.clock()));
    if (csv) {
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="placard-report.csv"')
        .send(reportCsv(report, await context.services.reportNames(actor, report)));
    }
    const range = { from: new Date(report.from).toISOString(), to: new Date(report.to).toISOString() };
    return { status: 'success', data: { ...report, ...range } };
  });
}
