import pino from 'pino';
import { sql } from 'kysely';
import { openSqliteFile } from '../src/store/connect.js';
import { describe, expect, it } from 'vitest';
import { FoldJob } from '../src/jobs/fold-job.js';
import { campaignInput } from './helpers/campaign-input.js';
import { withFreshStore } from './helpers/fresh-store.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';

/**
 * The fold on SQLite (migration 024): what batches appended reaches `event_rollups` within a pass
 * of the job, and at the latest when it stops, so a store left behind by a clean stop (and read by
 * an older release, or by a tool reading the table) holds every rollup there.
 */
describe('rollup fold job on sqlite', () => {
  it('folds every appended row when it stops, even before its first pass', async () => {
    await withFreshStore('sqlite', async (store) => {
      const { campaignIds } = await store.importCampaigns([
        { name: 'Fold job', campaigns: [campaignInput()] },
      ]);
      const source = await newPartnerKey(store, 'Fold job partner', 'd-fold-job');
      const at = Date.parse('2026-06-01T12:00:00Z');
      await store.insertEvents(
        Array.from({ length: 5 }, (_, i) =>
          trackedEvent({ ...source, campaignId: campaignIds[0], occurredAt: at + i * 60_000 }),
        ),
      );
      const count = async (table: 'event_rollups' | 'event_rollup_deltas') =>
        Number(
          (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(store.db)).rows[0]
            ?.n,
        );
      expect(await count('event_rollup_deltas')).toBe(5);
      // An hour between passes: only the stop can have folded them.
      const job = new FoldJob(store, pino({ level: 'silent' }), 3_600_000);
      job.start();
      await job.stop();
      expect(await count('event_rollup_deltas')).toBe(0);
      expect(await count('event_rollups')).toBe(5);
    });
  });

  it('takes no write lock when nothing is appended, so an idle server never holds up another writer', async () => {
    await withFreshStore('sqlite', async (store, database) => {
      // Another connection (the CLI, say) holds the write lock; a fold that tried to write would
      // wait for it, then fail.
      const other = openSqliteFile(database.url.replace(/^sqlite:/, ''), 0);
      try {
        other.exec('begin immediate');
        expect(await store.foldAppended()).toBe(0);
        other.exec('rollback');
      } finally {
        other.close();
      }
    });
  });
});
