// The audit log: every change, who made it, before and after. Part of the Store façade (store.ts):
// functions over a StoreContext.
import type { PageRequest, AuditEntry, AuditRecord } from './rows.js';
import { page, type StoreContext } from './context.js';

export async function appendAudit(ctx: StoreContext, ...entries: AuditEntry[]): Promise<void> {
  const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
  // Chunks keep each statement under both engines' limits on bound parameters.
  for (let start = 0; start < entries.length; start += 500) {
    await ctx.db
      .insertInto('audit_log')
      .values(
        entries.slice(start, start + 500).map((entry) => ({
          at: entry.at,
          actor: entry.actor,
          object_type: entry.objectType,
          object_id: entry.objectId,
          action: entry.action,
          reason: entry.reason,
          before: json(entry.before),
          after: json(entry.after),
        })),
      )
      .execute();
  }
}

export async function listAudit(
  ctx: StoreContext,
  filter: { objectType?: string; objectId?: string },
  request: PageRequest = {},
): Promise<AuditRecord[]> {
  let query = ctx.db.selectFrom('audit_log').selectAll();
  if (filter.objectType !== undefined) query = query.where('object_type', '=', filter.objectType);
  if (filter.objectId !== undefined) query = query.where('object_id', '=', filter.objectId);
  const rows = await page(query, request, 'id').execute();
  return rows.map((row) => ({
    id: row.id,
    at: row.at,
    actor: row.actor,
    objectType: row.object_type,
    objectId: row.object_id,
    action: row.action,
    reason: row.reason,
    before: row.before === null ? null : (JSON.parse(row.before) as unknown),
    after: row.after === null ? null : (JSON.parse(row.after) as unknown),
  }));
}
