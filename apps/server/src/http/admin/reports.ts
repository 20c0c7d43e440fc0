import type { FastifyInstance } from 'fastify';
import { invalidField } from '../../domain/errors.js';
import { parseReportRequest } from '../../domain/report-request.js';
import { reportCsv } from '../../services/report-format.js';
import { ReportService } from '../../services/reports.js';
import { MANAGEMENT_ROUTES } from '../openapi/management.js';
import type { AdminContext } from './context.js';

/** Wants CSV: `format=csv`, or no `format` and an Accept header that names text/csv. */
function wantsCsv(format: unknown, accept: string | undefined): boolean {
  if (format === undefined || format === '') return accept?.includes('text/csv') ?? false;
  if (format !== 'csv' && format !== 'json') throw invalidField('format', 'must be json or csv');
  return format === 'csv';
}

/** GET /admin/v1/reports: live reports from the per-minute rollups, as JSON or CSV. */
export async function reportRoutes(app: FastifyInstance, context: AdminContext): Promise<void> {
  app.get('/reports', { schema: MANAGEMENT_ROUTES.report }, async (request, reply) => {
    const reports = new ReportService(context.store, context.actor(request));
    const query = request.query as Record<string, unknown>;
    const csv = wantsCsv(query['format'], request.headers.accept);
    const report = await reports.run(parseReportRequest(query, context.clock()));
    if (csv) {
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="placard-report.csv"')
        .send(reportCsv(report));
    }
    const range = { from: new Date(report.from).toISOString(), to: new Date(report.to).toISOString() };
    return { status: 'success', data: { ...report, ...range } };
  });
}
