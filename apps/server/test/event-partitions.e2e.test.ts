import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayOf, PARTITION_DAYS_AHEAD, partitionName } from '../src/store/event-partitions.js';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { createDatabase, tempDir, type TestDatabase } from './helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from './helpers/process.js';

const DAY = 24 * 60 * 60 * 1000;

/**
 * Instances started at once on a new PostgreSQL store: each has the coming week's event partitions
 * before it serves, whichever created them.
 */
describe('event partitions when instances start', () => {
  let database: TestDatabase;
  const servers: ServerProcess[] = [];
  const dataDir = tempDir('placard-partitions-');

  beforeAll(async () => {
    ensureBuilt();
    database = await createDatabase('postgres');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates the days through a week ahead before serving, with instances starting at once', async () => {
    const env = { PLACARD_DATA_DIR: dataDir, PLACARD_DATABASE_URL: database.url, PLACARD_LOG_LEVEL: 'warn' };
    const store = new Store(connect(database.url));
    /** Asserts the days exist; read as soon as an instance serves, before its first retention pass (5 s). */
    const expectDays = async () => {
      const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i
        join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass`.execute(store.db);
      const names = rows.map((row) => row.name);
      const from = (await store.eventPartitions())?.partitionedFrom ?? 0;
      const last = dayOf(Date.now()) + PARTITION_DAYS_AHEAD * DAY;
      expect(names).toContain('events_legacy');
      for (let day = from; day <= last; day += DAY) expect(names).toContain(partitionName(day));
    };
    try {
      servers.push(await startServerProcess(env));
      await expectDays();
      servers.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
      await expectDays();
    } finally {
      await store.close();
    }
  }, 120_000);
});
