import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../src/domain/errors.js';
import { CLI_ACTOR } from '../src/services/audit.js';
import { CampaignService } from '../src/services/campaigns.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

let t: TestApp;
let now: number;
let engine: (typeof ENGINES)[number] = 'sqlite';
const HOUR = 3_600_000;

const document = (...campaigns: Record<string, unknown>[]) => ({
  advertisers: [{ name: 'Imported', campaigns }],
});
const importer = () => new CampaignService(t.store, CLI_ACTOR, () => now);
const statusOf = async (id: number) => (await t.admin('GET', `/campaigns/${id}`)).json().data.status;
const trail = async (id: number) =>
  (await t.admin('GET', `/audit?objectType=campaign&objectId=${id}`)).json().data as Array<{
    actor: string;
    action: string;
    reason: string | null;
  }>;

/** How many audit entries have `column` equal to `value`. */
const auditCount = async (column: 'object_type' | 'action', value: string): Promise<number> => {
  const { count } = await t.store.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where(column, '=', value)
    .executeTakeFirstOrThrow();
  return Number(count);
};

// Import writes advertisers, campaigns and their audit entries in one transaction on each engine.
describe.each(ENGINES)('campaign import on %s', (name) => {
  beforeEach(async () => {
    engine = name;
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine, clock: () => now });
  });
  afterEach(() => t.close());

  it('sends imported campaigns through review unless the import is approved', async () => {
    const { campaignIds } = await importer().import(
      document(
        { ...campaign(), status: undefined },
        campaign({ status: 'pending_review' }),
        campaign({ status: 'rejected' }),
      ),
    );
    expect(await Promise.all(campaignIds.map(statusOf))).toEqual(['draft', 'pending_review', 'rejected']);
    for (const id of campaignIds)
      expect((await trail(id))[0]).toMatchObject({ action: 'import', reason: null });
  });

  it.each(['scheduled', 'running', 'paused', 'completed'])(
    'refuses an unapproved import asking for %s, naming the field, and stores nothing',
    async (status) => {
      const before = (await t.admin('GET', '/campaigns')).json().data.length;
      const refused = await importer()
        .import(document(campaign({ status: 'draft' }), campaign({ status })))
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DomainError);
      expect((refused as DomainError).problems).toEqual([
        {
          field: 'advertisers[0].campaigns[1].status',
          message: expect.stringContaining(`"${status}" skips review`),
        },
      ]);
      expect((await t.admin('GET', '/campaigns')).json().data.length).toBe(before);
    },
  );

  it('lands an approved import where the clock puts it, and audits the approval with who', async () => {
    const { campaignIds } = await importer().import(
      document(
        campaign({ status: 'running', startAt: new Date(now + 24 * HOUR).toISOString() }),
        campaign({ status: 'scheduled' }),
        campaign({ status: 'running', endAt: new Date(now - HOUR).toISOString() }),
        campaign({ status: 'paused' }),
        campaign({ status: 'draft' }),
      ),
      { approve: true },
    );
    expect(await Promise.all(campaignIds.map(statusOf))).toEqual([
      'scheduled',
      'running',
      'completed',
      'paused',
      'draft',
    ]);
    const [future, , , , draft] = campaignIds as [number, number, number, number, number];
    expect(await trail(future)).toEqual([
      expect.objectContaining({ actor: 'cli', action: 'import', reason: 'approved on import' }),
    ]);
    expect((await trail(draft))[0]).toMatchObject({ action: 'import', reason: null });
    // Listed as scheduled, not served before its start.
    const scheduled = (await t.admin('GET', '/campaigns?status=scheduled')).json().data;
    expect(scheduled.map((c: { id: number }) => c.id)).toContain(future);
    await t.state.refresh();
    const served = (await t.fetch('placement=header_banner')).json().data.map((c: { id: number }) => c.id);
    expect(served).not.toContain(future);
  });

  // A list of audit entries is never spread into a call's arguments: 200,000 entries in one
  // argument list overflow the stack (an import writes one per campaign).
  it('appends 200,000 audit entries in one call', async () => {
    const entries = Array.from({ length: 200_000 }, (_, i) => ({
      at: now,
      actor: 'cli',
      objectType: 'bulk',
      objectId: String(i),
      action: 'import',
      reason: null,
      before: null,
      after: null,
    }));
    await t.store.transaction((tx) => tx.appendAudit(entries));
    expect(await auditCount('object_type', 'bulk')).toBe(200_000);
  }, 300_000);
});

// The whole import of 100,000 campaigns, on SQLite: it once failed with `Maximum call stack size
// exceeded` (the audit entries spread into the call twice). Minimal campaigns, so it stays quick.
describe('an import of 100,000 campaigns', () => {
  beforeEach(async () => {
    now = Date.parse('2026-06-01T12:00:00Z');
    t = await createTestApp({ engine: 'sqlite', clock: () => now });
  });
  afterEach(() => t.close());

  it('imports and audits every campaign', async () => {
    const campaigns = Array.from({ length: 100_000 }, (_, i) =>
      campaign({ title: `Bulk ${i}`, status: 'draft' }),
    );
    const summary = await importer().import(document(...campaigns));
    expect(summary.campaignsCreated).toBe(100_000);
    expect(await auditCount('action', 'import')).toBe(100_000);
  }, 300_000);
});
