import type { FastifyInstance } from 'fastify';
import type { DashboardDeps } from './context.js';
import { pageAsked, pagingOf } from './paging.js';
import { AuditPage } from './pages/audit.js';
import { HealthPage } from './pages/health.js';
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

/** The operator's audit log and the service's health; the operator's only (pages/access.ts), as in the management API. */
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

  app.get('/health', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const health = await deps.health(request.log);
    return sendPage(reply, HealthPage({ page: pageContext(request, reply), health }));
  });
}
