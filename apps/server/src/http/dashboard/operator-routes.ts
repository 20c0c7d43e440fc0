import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import { SUMMARY_MONTHS } from '../../services/money-summary.js';
import { describeError } from '../errors.js';
import type { DashboardDeps } from './context.js';
import { pageAsked, pagingOf } from './paging.js';
import { AuditPage } from './pages/audit.js';
import { HealthPage } from './pages/health.js';
import { MoneyFiguresSection, MoneyPage } from './pages/money.js';
import { sendPage } from './render.js';
import { PAGE, pageContext, requireSignedIn } from './support.js';

/** The top-level fields a change touched, comparing the record before and after it. */
function changedFields(before: unknown, after: unknown): string[] {
  if (before === null || after === null || typeof before !== 'object' || typeof after !== 'object') return [];
  const was = before as Record<string, unknown>;
  const is = after as Record<string, unknown>;
  return [...new Set([...Object.keys(was), ...Object.keys(is)])].filter(
    (field) => field !== 'updatedAt' && JSON.stringify(was[field]) !== JSON.stringify(is[field]),
  );
}

/** The time of day in `timeZone`, as a page says when it was updated. */
const timeOfDay = (at: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(at);

/** The month a money page asks for (`?month=YYYY-MM`), or none for this month. */
const monthAsked = (request: FastifyRequest): unknown => (request.query as Record<string, unknown>)['month'];

/**
 * The operator's audit log, money and the service's health; the operator's only (pages/access.ts),
 * as in the management API.
 */
export async function operatorRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get('/audit', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const asked = pageAsked(request);
    const found = await deps.services.auditPage(signedIn.actor, asked);
    const rows = found.rows;
    const names = await deps.services.auditActorNames(
      signedIn.actor,
      rows.map((record) => record.actor),
    );
    const entries = rows.map((record) => ({
      ...record,
      who: names.get(record.actor) ?? record.actor,
      changed: changedFields(record.before, record.after),
    }));
    const page = pageContext(request, reply);
    return sendPage(reply, AuditPage({ page, entries, paging: pagingOf(request, '/audit', asked, found) }));
  });

  app.get('/money', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const money = deps.services.moneySummary(signedIn.actor);
    let problem: string | undefined;
    let status = 200;
    let summary;
    try {
      summary = await money.month(monthAsked(request));
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind === 'unavailable') throw error;
      problem = error.message;
      status = describeError(error).status;
    }
    const month = summary?.month ?? money.thisMonth();
    const page = MoneyPage({
      page: pageContext(request, reply),
      months: await money.months(SUMMARY_MONTHS, month),
      month,
      updatedAt: timeOfDay(deps.clock(), summary?.timeZone ?? 'UTC'),
      ...(summary && { summary }),
      ...(problem && { problem }),
    });
    return sendPage(reply, page, status);
  });

  // The live part alone, asked for every few seconds by the page while its month runs.
  app.get('/money/figures', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const summary = await deps.services.moneySummary(signedIn.actor).month(monthAsked(request));
    const updatedAt = timeOfDay(deps.clock(), summary.timeZone);
    return sendPage(reply, MoneyFiguresSection({ summary, updatedAt }), 200, { fragment: true });
  });

  app.get('/health', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const health = await deps.health(request.log);
    return sendPage(reply, HealthPage({ page: pageContext(request, reply), health }));
  });
}
