import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type { Connection } from './connect.js';
import { ENGINE_TRAITS } from './engine-traits.js';
import * as initial from './migrations/001-initial.js';
import * as management from './migrations/002-management.js';
import * as flightIndexes from './migrations/003-flight-indexes.js';
import * as eventLedger from './migrations/004-event-ledger.js';
import * as browserUses from './migrations/005-browser-uses.js';
import * as requestFingerprints from './migrations/006-request-fingerprints.js';
import * as adminTokenLifecycle from './migrations/007-admin-token-lifecycle.js';
import * as people from './migrations/008-people.js';
import * as tokenRoles from './migrations/009-token-roles.js';
import * as campaignChanges from './migrations/011-campaign-changes.js';
import * as verdictReasons from './migrations/012-verdict-reasons.js';
import * as campaignRollups from './migrations/013-campaign-rollups.js';
import * as keyFlags from './migrations/014-key-flags.js';
import * as pacing from './migrations/015-pacing.js';
import * as eventPartitions from './migrations/016-event-partitions.js';
import * as eventTimes from './migrations/017-event-times.js';
import * as campaignChangesByStatement from './migrations/018-campaign-changes-by-statement.js';
import * as campaignDelivery from './migrations/019-campaign-delivery.js';
import * as money from './migrations/020-money.js';
import * as statements from './migrations/021-statements.js';
import * as advertiserBudgets from './migrations/022-advertiser-budgets.js';
import * as advertiserPricing from './migrations/023-advertiser-pricing.js';
import * as rollupDeltas from './migrations/024-rollup-deltas.js';
import * as chargeDeltas from './migrations/025-charge-deltas.js';
import * as webhooks from './migrations/026-webhooks.js';
import * as advertiserBlocks from './migrations/027-advertiser-blocks.js';
import * as campaignSchedules from './migrations/028-campaign-schedules.js';
import * as frequencyCaps from './migrations/029-frequency-caps.js';
import * as chargeRowsMerged from './migrations/030-charge-rows-merged.js';
import * as chargesInRollupDeltas from './migrations/031-charges-in-rollup-deltas.js';
import * as idempotencyKeyMarks from './migrations/032-idempotency-key-marks.js';

/** Where Kysely's migrator records the migrations applied. */
const MIGRATION_TABLE = DEFAULT_MIGRATION_TABLE;

/** Migrations in order; names are sortable and never renamed once released (010 was never released). */
function migrations(connection: Connection): Record<string, Migration> {
  return {
    '001-initial': { up: (db) => initial.up(db, connection.engine) },
    '002-management': { up: (db) => management.up(db, connection.engine) },
    '003-flight-indexes': { up: (db) => flightIndexes.up(db) },
    '004-event-ledger': { up: (db) => eventLedger.up(db) },
    '005-browser-uses': { up: (db) => browserUses.up(db) },
    '006-request-fingerprints': { up: (db) => requestFingerprints.up(db) },
    '007-admin-token-lifecycle': { up: (db) => adminTokenLifecycle.up(db) },
    '008-people': { up: (db) => people.up(db, connection.engine) },
    '009-token-roles': { up: (db) => tokenRoles.up(db) },
    '011-campaign-changes': { up: (db) => campaignChanges.up(db, connection.engine) },
    '012-verdict-reasons': { up: (db) => verdictReasons.up(db, connection.engine) },
    '013-campaign-rollups': { up: (db) => campaignRollups.up(db, connection.engine) },
    '014-key-flags': { up: (db) => keyFlags.up(db, connection.engine) },
    '015-pacing': { up: (db) => pacing.up(db) },
    '016-event-partitions': { up: (db) => eventPartitions.up(db, connection.engine) },
    '017-event-times': { up: (db) => eventTimes.up(db) },
    '018-campaign-changes-by-statement': {
      up: (db) => campaignChangesByStatement.up(db, connection.engine),
    },
    '019-campaign-delivery': { up: (db) => campaignDelivery.up(db, connection.engine) },
    '020-money': { up: (db) => money.up(db, connection.engine) },
    '021-statements': { up: (db) => statements.up(db, connection.engine) },
    '022-advertiser-budgets': { up: (db) => advertiserBudgets.up(db) },
    '023-advertiser-pricing': { up: (db) => advertiserPricing.up(db) },
    '024-rollup-deltas': { up: (db) => rollupDeltas.up(db, connection.engine) },
    '025-charge-deltas': { up: (db) => chargeDeltas.up(db, connection.engine) },
    '026-webhooks': { up: (db) => webhooks.up(db, connection.engine) },
    '027-advertiser-blocks': { up: (db) => advertiserBlocks.up(db) },
    '028-campaign-schedules': { up: (db) => campaignSchedules.up(db) },
    '029-frequency-caps': { up: (db) => frequencyCaps.up(db, connection.engine) },
    '030-charge-rows-merged': { up: (db) => chargeRowsMerged.up(db, connection.engine) },
    '031-charges-in-rollup-deltas': { up: (db) => chargesInRollupDeltas.up(db, connection.engine) },
    '032-idempotency-key-marks': { up: (db) => idempotencyKeyMarks.up(db, connection.engine) },
  };
}

export interface MigrationReport {
  applied: string[];
  pending: string[];
  /**
   * Migrations the store has that this version does not know, all newer than every one it knows:
   * a newer version migrated the store during a rolling upgrade. This version then serves on it
   * without migrating, which a release's migrations allow by only adding (docs/deployment.md).
   */
  ahead: string[];
}

function migrator(connection: Connection): Migrator {
  return new Migrator({
    db: connection.db,
    provider: { getMigrations: async () => migrations(connection) },
  });
}

/** The names of the migrations the store has applied (none on a new store). */
async function appliedNames(connection: Connection): Promise<string[]> {
  if (!(await ENGINE_TRAITS[connection.engine].hasTable(connection.db, MIGRATION_TABLE))) return [];
  const applied = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(
    connection.db,
  );
  return applied.rows.map((row) => row.name);
}

/**
 * Applies every pending migration, or those up to `until` (tests of an upgrade), each in its own
 * transaction; throws on the first failure. A store a newer version has migrated
 * (`MigrationReport.ahead`) is left as it is.
 */
export async function migrateToLatest(connection: Connection, until?: string): Promise<MigrationReport> {
  const known = Object.keys(migrations(connection)).sort();
  const unknown = (await appliedNames(connection)).filter((name) => !known.includes(name)).sort();
  const newest = known[known.length - 1] ?? '';
  if (unknown.length > 0 && unknown.every((name) => name > newest)) {
    const pending = await pendingMigrations(connection);
    // A gap below the newer ones is not a rolling upgrade: let the migrator say what is wrong.
    if (pending.length === 0) return { applied: [], pending, ahead: unknown };
  }
  const result: MigrationResultSet =
    until === undefined
      ? await migrator(connection).migrateToLatest()
      : await migrator(connection).migrateTo(until);
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String((result.error as Error).message ?? result.error)}`);
  }
  return {
    applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    pending: [],
    ahead: [],
  };
}

/** Names of migrations not yet applied (used by readiness checks and `placard migrate --status`). */
export async function pendingMigrations(connection: Connection): Promise<string[]> {
  const all = await migrator(connection).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
