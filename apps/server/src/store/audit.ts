// The audit log: every change, who made it, before and after. Part of the Store façade (store.ts):
// functions over a StoreContext.
import type { Selectable } from 'kysely';
import type { NumberedPage, NumberedPageRequest, PageRequest, AuditEntry, AuditRecord } from './rows.js';
import type { AuditLogTable } from './schema.js';
import { numberedPage, page, transact, type StoreContext } from './context.js';
import { enqueueWebhooks, webhookEventsOfAudit } from './webhooks.js';

/**
 * Appends one entry or a list of them. A list is passed as an array, never spread into arguments:
 * an import writes one entry per campaign, and a spread of 100,000 arguments overflows the stack.
 */
export async function appendAudit(
  ctx: StoreContext,
  entryOrEntries: AuditEntry | readonly AuditEntry[],
): Promise<void> {
  // One transaction (joined when the caller's is open): the entries and their webhooks, or nothing.
  await transact(ctx, (tx) => appendAuditIn(tx, entryOrEntries));
}

async function appendAuditIn(
  ctx: StoreContext,
  entryOrEntries: AuditEntry | readonly AuditEntry[],
): Promise<void> {
  const entries: readonly AuditEntry[] = Array.isArray(entryOrEntries) ? entryOrEntries : [entryOrEntries];
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
  // The webhooks these changes cause, in the same transaction: written together or not at all.
  const last = entries.at(-1);
  if (last !== undefined) await enqueueWebhooks(ctx, await webhookEventsOfAudit(ctx, entries), last.at);
}

/** The audit log's rows that `filter` selects, as a query to read rows or count them from. */
function auditWhere(ctx: StoreContext, filter: { objectType?: string; objectId?: string }) {
  let query = ctx.db.selectFrom('audit_log');
  if (filter.objectType !== undefined) query = query.where('object_type', '=', filter.objectType);
  if (filter.objectId !== undefined) query = query.where('object_id', '=', filter.objectId);
  return query;
}

const toAuditRecord = (row: Selectable<AuditLogTable>): AuditRecord => ({
  id: row.id,
  at: row.at,
  actor: row.actor,
  objectType: row.object_type,
  objectId: row.object_id,
  action: row.action,
  reason: row.reason,
  before: row.before === null ? null : (JSON.parse(row.before) as unknown),
  after: row.after === null ? null : (JSON.parse(row.after) as unknown),
});

export async function listAudit(
  ctx: StoreContext,
  filter: { objectType?: string; objectId?: string },
  request: PageRequest = {},
): Promise<AuditRecord[]> {
  const rows = await page(auditWhere(ctx, filter).selectAll(), request, 'id').execute();
  return rows.map(toAuditRecord);
}

/** One numbered page of the audit log, newest first, and how many entries it has. */
export async function auditPage(
  ctx: StoreContext,
  filter: { objectType?: string; objectId?: string },
  request: NumberedPageRequest,
): Promise<NumberedPage<AuditRecord>> {
  return numberedPage(auditWhere(ctx, filter), 'id', request, toAuditRecord);
}
