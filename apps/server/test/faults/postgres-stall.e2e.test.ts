import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type TestDatabase } from '../helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * A PostgreSQL that accepts connections and then stops answering (a stalled server, a black-holed
 * network) must cost a request no more than the store deadline and a 503 with Retry-After: no
 * request waits without end, fetch keeps being served from memory, and once the database answers
 * again a retry with the same Idempotency-Key is stored exactly once.
 */
const DEADLINE_MS = 1_000;
/**
 * The longest a refused request may take here: about `2 * DEADLINE_MS` on an idle machine, more on
 * a loaded one; a request that waited for the stalled database instead would run into the 20 s
 * abort of `timed`.
 */
const REFUSED_WITHIN_MS = 10 * DEADLINE_MS;

describe('a stalled PostgreSQL', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess;

  beforeAll(async () => {
    ensureBuilt();
    database = await createDatabase('postgres');
    proxy = await tcpProxy(new URL(database.url));
    server = await startServerProcess(
      { PLACARD_DATABASE_URL: proxy.url, PLACARD_STORE_DEADLINE_MS: String(DEADLINE_MS) },
      ['--demo'],
    );
  });
  afterAll(async () => {
    if (server) await server.stop();
    proxy?.close();
    await database?.drop();
  });

  /** A request and how long its answer took. */
  async function timed(path: string, init: RequestInit = {}) {
    const started = performance.now();
    const response = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    await response.arrayBuffer();
    return { response, ms: performance.now() - started };
  }

  it('answers 503 with Retry-After within the deadline, keeps fetch served, and recovers on new connections', async () => {
    const apiKey = server.summary.demoApiKey!;
    const partner = { authorization: `Bearer ${apiKey}` };
    const admin = { authorization: `Bearer ${server.summary.adminToken!}` };
    const fetched = await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
      headers: partner,
    });
    const campaignId = ((await fetched.json()) as { data: Array<{ id: number }> }).data[0].id;
    const impression = (key: string) =>
      timed('/api/v1/campaigns/impression', {
        method: 'POST',
        headers: { ...partner, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ campaignId, placement: 'header_banner' }),
      });
    expect((await impression('stall-before')).response.status).toBe(200);

    proxy.stall();
    try {
      // Tracking: the batch's commit gets no answer; the request is refused within the deadline
      // (plus a connection's deadline if the pool had to open one, and the batch's own wait).
      const tracked = await impression('stall-during');
      expect(tracked.response.status).toBe(503);
      expect(tracked.response.headers.get('retry-after')).toBe('1');
      expect(tracked.ms).toBeLessThan(REFUSED_WITHIN_MS);

      // Management reads the store too: the same answer, never a 500 or an endless wait.
      const listed = await timed('/admin/v1/campaigns?limit=5', { headers: admin });
      expect(listed.response.status).toBe(503);
      expect(listed.response.headers.get('retry-after')).toBe('1');
      expect(listed.ms).toBeLessThan(REFUSED_WITHIN_MS);

      // Fetch is served from memory, stall or not: one that read the store would be the deadline's 503.
      const served = await timed('/api/v1/campaigns/fetch?placement=header_banner', { headers: partner });
      expect(served.response.status).toBe(200);
    } finally {
      proxy.healNewConnections();
    }

    // The database answers new connections again, while the ones that stalled stay silent: the
    // server gives up on those and connects afresh, and the retry of the refused event is stored.
    await expect
      .poll(async () => (await impression('stall-during')).response.status, {
        timeout: 15_000,
        interval: 250,
      })
      .toBe(200);
    expect((await timed('/admin/v1/campaigns?limit=5', { headers: admin })).response.status).toBe(200);
    expect(server.child.exitCode).toBeNull();

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const rows = await client.query<{ idempotency_key: string; counted: string }>(
        `select idempotency_key, count(*) filter (where verdict = 'counted') as counted
           from events where idempotency_key like 'stall-%' group by idempotency_key order by 1`,
      );
      expect(rows.rows.map((row) => [row.idempotency_key, Number(row.counted)])).toEqual([
        ['stall-before', 1],
        ['stall-during', 1],
      ]);
    } finally {
      await client.end();
    }
  });
});
