import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Account } from '../../domain/accounts.js';
import { DomainError } from '../../domain/errors.js';
import { DATES } from '../../domain/report-windows.js';
import { BREAKDOWNS, readFiguresQuery, type FiguresQuery } from '../../services/live-figures.js';
import { reportCsv } from '../../services/report-format.js';
import type { SignedIn } from '../../services/sessions.js';
import { describeError } from '../errors.js';
import type { DashboardDeps } from './context.js';
import { LiveFigures, ReportsPage } from './pages/reports.js';
import { LIST_PAGE_SIZE } from './paging.js';
import { sendPage } from './render.js';
import { PAGE, pageContext, requireSignedIn } from './support.js';

const TITLES: Record<Account['kind'], string> = {
  operator: 'Reports',
  advertiser: 'Reports',
  partner: 'Delivery report',
};

/** What an empty report tells each kind of account to expect. */
const EMPTY: Record<Account['kind'], string> = {
  operator:
    'No events in this period. Impressions and clicks appear here within seconds of a partner reporting them.',
  advertiser:
    'No events in this period. Once your campaigns are approved and running, their impressions and clicks appear here within seconds of a partner reporting them.',
  partner:
    'No events in this period. The impressions and clicks your servers report appear here within seconds: the Integration page shows how to send them.',
};

/**
 * Live reports (D14): an advertiser's campaigns, a partner's delivery, the operator's everything,
 * each as totals, a chart, the same numbers as a table, a breakdown and a CSV export. The figures
 * come from the report service, which narrows every report to the person's own account (D13).
 */
export async function reportRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const queryOf = (request: FastifyRequest, signedIn: SignedIn): FiguresQuery =>
    readFiguresQuery(request.query as Record<string, unknown>, signedIn.user.account.kind);
  const figuresOf = (signedIn: SignedIn, query: FiguresQuery) =>
    deps.services.liveFigures(signedIn.actor, query);
  const updatedAt = (timeZone: string) =>
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }).format(deps.clock());

  app.get('/reports', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const kind = signedIn.user.account.kind;
    const raw = request.query as Record<string, unknown>;
    let query: FiguresQuery = { window: 'day', timeZone: 'UTC', breakdown: BREAKDOWNS[kind][0]! };
    let problem: string | undefined;
    let status = 200;
    let figures;
    try {
      query = queryOf(request, signedIn);
      figures = await figuresOf(signedIn, query);
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind === 'unavailable') throw error;
      problem = error.message;
      status = describeError(error).status;
      // Keep what the person chose, so the form shows it beside the problem.
      for (const name of ['timeZone', 'campaign', 'placement', 'from', 'to'] as const)
        if (typeof raw[name] === 'string' && raw[name] !== '') query[name] = raw[name];
      if (raw['window'] === DATES) query.window = DATES;
    }
    // The newest page of campaigns is suggested; any other is typed by its number.
    const campaigns =
      kind === 'partner'
        ? []
        : (
            await deps.services.campaigns(signedIn.actor).page({}, { offset: 0, size: LIST_PAGE_SIZE })
          ).rows.map((c) => ({
            id: c.id,
            title: c.title,
          }));
    const placements = (await deps.services.placements(signedIn.actor).list()).map((p) => p.id);
    const page = ReportsPage({
      page: pageContext(request, reply),
      title: TITLES[kind],
      query,
      breakdowns: BREAKDOWNS[kind],
      campaigns,
      placements,
      updatedAt: updatedAt(problem ? 'UTC' : query.timeZone),
      emptyHint: EMPTY[kind],
      publicUrl: deps.publicUrl,
      ...(figures && { figures }),
      ...(problem && { problem }),
    });
    return sendPage(reply, page, status);
  });

  // The live part alone, asked for every few seconds by the page. A session that ended sends the
  // whole page to the sign-in form (htmx follows HX-Redirect) instead of swapping it in here.
  app.get('/reports/figures', PAGE, async (request, reply) => {
    const signedIn = request.signedIn;
    if (!signedIn) {
      const back = `/reports?${new URLSearchParams(request.query as Record<string, string>).toString()}`;
      return reply
        .code(204)
        .header('hx-redirect', `/sign-in?next=${encodeURIComponent(back)}`)
        .send();
    }
    const query = queryOf(request, signedIn);
    const figures = await figuresOf(signedIn, query);
    return sendPage(
      reply,
      LiveFigures({
        figures,
        updatedAt: updatedAt(query.timeZone),
        emptyHint: EMPTY[signedIn.user.account.kind],
      }),
      200,
      { fragment: true },
    );
  });

  app.get('/reports.csv', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const query = queryOf(request, signedIn);
    const { report } = await figuresOf(signedIn, query);
    const day = new Date(deps.clock()).toISOString().slice(0, 10);
    const span = query.window === DATES ? `${query.from}-to-${query.to}` : query.window;
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="placard-${span}-${query.breakdown}-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(reportCsv(report, await deps.services.reportNames(signedIn.actor, report)));
  });
}
