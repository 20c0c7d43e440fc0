import fs from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, tempDir, type TestDatabase } from '../helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { demoImpressionBody, liftDemoKeyLimits, postImpression } from '../helpers/tracking-client.js';

/**
 * PostgreSQL connections die in production: failovers, restarts, an administrator's
 * pg_terminate_backend, a proxy or firewall that resets connections. The server must live through
 * it: a batch that loses its connection answers 503 with Retry-After, the pool reconnects, and a
 * client that retries with the same Idempotency-Key gets every event stored exactly once.
 */

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** Both servers of this file share one database, so only the first start would print a token. */
const ADMIN_TOKEN = `pla_${'0123456789'.repeat(4)}`;
/** And one data folder: the second start prints the demo key the first wrote there. */
const DATA_DIR = tempDir('placard-connection-loss-');

/** How much the load must see before it stops: enough faults, and enough events acknowledged through them. */
const ENOUGH = { faults: 8, acknowledged: 200 };
/**
 * The load stops here whatever it has seen, so a server that stops acknowledging fails the test.
 * An idle machine passes ENOUGH in about 10 s; this leaves room for one ten times as busy.
 */
const LOAD_LIMIT_MS = 180_000;
/** The server's start window (100 s), the load's limit and the checks, on a slow machine. */
const TEST_TIMEOUT_MS = 330_000;

/**
 * Eight clients send impressions one after another, retrying a refused one with the same key,
 * while `fault` runs every 250 ms, until both counts of ENOUGH are passed (a busy machine takes
 * longer, it does not fail), LOAD_LIMIT_MS runs out, the server exits or a fault fails; returns
 * what the clients saw.
 */
async function loadThroughFaults(server: ServerProcess, fault: () => Promise<number>, keyPrefix: string) {
  await liftDemoKeyLimits(server, ADMIN_TOKEN);
  const apiKey = server.summary.demoApiKey!;
  const body = await demoImpressionBody(server);
  const seen = { unexpected: [] as string[], refused: 0, faults: 0, acknowledged: new Set<string>() };
  const stopAt = Date.now() + LOAD_LIMIT_MS;
  let stopped = false;
  const going = () =>
    !stopped &&
    server.child.exitCode === null &&
    Date.now() < stopAt &&
    (seen.faults < ENOUGH.faults || seen.acknowledged.size < ENOUGH.acknowledged);
  const client = async (n: number) => {
    for (let i = 0; going(); i++) {
      const key = `${keyPrefix}-${n}-${i}`;
      for (let attempt = 0; attempt < 50; attempt++) {
        const answer = await postImpression(server.url, apiKey, body, key, agent);
        if (answer.status === 200) {
          seen.acknowledged.add(key);
          break;
        }
        if (answer.status === 503 && answer.retryAfter) seen.refused++;
        else seen.unexpected.push(`${key}: ${answer.error ?? answer.status}`);
        if (server.child.exitCode !== null) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  };
  const faults = async () => {
    while (going()) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen.faults += await fault();
    }
  };
  try {
    await Promise.all([faults(), ...Array.from({ length: 8 }, (_, n) => client(n))]);
  } finally {
    stopped = true; // a failed fault rejects at once: the clients stop before the server does
  }
  return seen;
}

describe('PostgreSQL connections lost under load', () => {
  let database: TestDatabase;
  let admin: pg.Client;

  beforeAll(async () => {
    ensureBuilt();
    database = await createDatabase('postgres');
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
    fs.rmSync(DATA_DIR, { recursive: true, force: true });
  });

  /** Runs the load against a server on `databaseUrl`, then checks the outcome against the store. */
  async function survives(databaseUrl: string, fault: () => Promise<number>, prefix: string) {
    const server = await startServerProcess(
      { PLACARD_DATABASE_URL: databaseUrl, PLACARD_ADMIN_TOKEN: ADMIN_TOKEN, PLACARD_DATA_DIR: DATA_DIR },
      ['--demo'],
    );
    try {
      const seen = await loadThroughFaults(server, fault, prefix);
      expect(server.child.exitCode, server.output.slice(-20).join('\n')).toBeNull();
      expect(seen.unexpected.slice(0, 5)).toEqual([]);
      // The faults really happened, and the service went on acknowledging events through them.
      expect(seen.faults).toBeGreaterThanOrEqual(ENOUGH.faults);
      expect(seen.acknowledged.size).toBeGreaterThanOrEqual(ENOUGH.acknowledged);
      console.log(
        `${prefix}: ${seen.faults} connections ended, ${seen.acknowledged.size} events acknowledged, ${seen.refused} attempts refused with 503`,
      );
      // Every acknowledged event is counted exactly once, and nothing else is counted. A retry of
      // an event whose commit went through but whose answer was lost is stored as a duplicate.
      const rows = await admin.query<{ idempotency_key: string; counted: string }>(
        `select idempotency_key, count(*) filter (where verdict = 'counted') as counted
           from events where idempotency_key like $1 group by idempotency_key`,
        [`${prefix}-%`],
      );
      expect(rows.rows.filter((row) => Number(row.counted) !== 1)).toEqual([]);
      expect(rows.rows.map((row) => row.idempotency_key).sort()).toEqual([...seen.acknowledged].sort());
    } finally {
      await server.stop();
    }
  }

  it(
    'survives an administrator terminating its backends every 250 ms',
    async () => {
      const name = new URL(database.url).pathname.slice(1);
      await survives(
        database.url,
        async () =>
          (
            await admin.query(
              'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
              [name],
            )
          ).rowCount ?? 0,
        'terminated',
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'survives a proxy that resets its connections every 250 ms',
    async () => {
      const proxy = await tcpProxy(new URL(database.url));
      try {
        await survives(proxy.url, async () => proxy.reset(), 'reset');
      } finally {
        proxy.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
