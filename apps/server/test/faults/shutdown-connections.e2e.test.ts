import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/store/connect.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import {
  demoImpressionBody,
  getOn,
  liftDemoKeyLimits,
  postImpression,
  type TrackingAnswer,
} from '../helpers/tracking-client.js';

/**
 * SIGTERM while partners keep connections open between calls, and while one client has sent only
 * half of its request. Clients that were answered never see their connection reset; the process
 * flushes what it acknowledged and exits 0 within 10 s whatever a straggler does.
 */

type Outcome = TrackingAnswer & { key: string; impression: boolean };

async function countedKeys(dataDir: string, prefix: string): Promise<string[]> {
  const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
  try {
    const rows = await store.db
      .selectFrom('events')
      .select('idempotency_key')
      .where('idempotency_key', 'like', `${prefix}%`)
      .where('verdict', '=', 'counted')
      .execute();
    return rows.map((row) => row.idempotency_key!).sort();
  } finally {
    await store.close();
  }
}

describe('shutdown with open connections', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    // A failed test must not leave its server running.
    for (const server of servers.splice(0)) await server.stop('SIGKILL');
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A demo server on a data directory of its own, and a tracking body for one of its campaigns. */
  async function startDemo() {
    ensureBuilt();
    const dataDir = tempDir('placard-shutdown-');
    dirs.push(dataDir);
    const server = await startServerProcess({ PLACARD_DATA_DIR: dataDir }, ['--demo']);
    servers.push(server);
    await liftDemoKeyLimits(server);
    return { dataDir, server, body: await demoImpressionBody(server) };
  }

  it('resets no connection that carried an answer, refuses only with 503 or at connect, and loses nothing', async () => {
    const { dataDir, server, body } = await startDemo();
    const apiKey = server.summary.demoApiKey!;
    const partner = { authorization: `Bearer ${apiKey}` };
    const operator = { authorization: `Bearer ${server.summary.adminToken}` };

    // 48 clients, each with its own keep-alive connection, cycling over a partner's calls, a probe
    // and an operator's call, with pauses between them, so that at the signal some connections are
    // mid-request and others sit idle between requests.
    const outcomes: Outcome[] = [];
    let exit: Promise<number | null> | undefined;
    let signalledAt = 0;
    let exitedAt = 0;
    const call = (n: number, i: number, agent: http.Agent): Promise<TrackingAnswer> => {
      switch ((n + i) % 4) {
        case 0:
          return postImpression(server.url, apiKey, body, `ka-${n}-${i}`, agent);
        case 1:
          return getOn(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, agent, partner);
        case 2:
          return getOn(`${server.url}/healthz`, agent);
        default:
          return getOn(`${server.url}/admin/v1/placements`, agent, operator);
      }
    };
    const client = async (n: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; ; i++) {
          const outcome = {
            key: `ka-${n}-${i}`,
            impression: (n + i) % 4 === 0,
            ...(await call(n, i, agent)),
          };
          outcomes.push(outcome);
          if (outcomes.length === 48 * 20 && !exit) {
            signalledAt = Date.now();
            exit = server.stop('SIGTERM').then((code) => {
              exitedAt = Date.now();
              return code;
            });
          }
          if (outcome.error === 'ECONNREFUSED' || (exit && Date.now() - signalledAt > 12_000)) return;
          await new Promise((resolve) => setTimeout(resolve, (n * 7 + i * 13) % 40));
        }
      } finally {
        agent.destroy();
      }
    };
    await Promise.all(Array.from({ length: 48 }, (_, n) => client(n)));
    expect(await exit).toBe(0);
    expect(exitedAt - signalledAt).toBeLessThan(10_000);
    // A client that was answered on a connection never sees that connection reset: every
    // request sent on a kept-alive connection got an answer.
    expect(outcomes.filter((o) => o.reused && o.status === 0)).toEqual([]);
    // New connections are refused once the instance stops listening: at connect, or, for one
    // still in the kernel's accept queue at that moment, by a reset before any byte was read.
    const kinds = new Set(
      outcomes.map((o) =>
        o.status === 200
          ? 'answered'
          : o.status === 503 && o.retryAfter
            ? 'unavailable'
            : (o.error ?? `status ${o.status}`),
      ),
    );
    const allowed = ['answered', 'unavailable', 'ECONNREFUSED', 'ECONNRESET'];
    expect([...kinds].filter((kind) => !allowed.includes(kind))).toEqual([]);
    // Nothing unacknowledged was stored (a reset request was never read), nothing acknowledged lost.
    const acknowledged = outcomes
      .filter((o) => o.impression && o.status === 200)
      .map((o) => o.key)
      .sort();
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(await countedKeys(dataDir, 'ka-')).toEqual(acknowledged);
  }, 60_000);

  it('exits 0 within 10 s with a half-sent request open, after storing what it acknowledged', async () => {
    const { dataDir, server, body } = await startDemo();
    const agent = new http.Agent({ keepAlive: false });
    const acknowledged = await postImpression(
      server.url,
      server.summary.demoApiKey!,
      body,
      'half-acked',
      agent,
    );
    expect(acknowledged.status).toBe(200);

    // Headers and half of the body, then nothing more.
    const { port } = new URL(server.url);
    const straggler = net.connect(Number(port), '127.0.0.1');
    straggler.on('error', () => undefined);
    await new Promise((resolve) => straggler.once('connect', resolve));
    straggler.write(
      `POST /api/v1/campaigns/impression HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.summary.demoApiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    const signalledAt = Date.now();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    straggler.destroy();
    expect(await countedKeys(dataDir, 'half-')).toEqual(['half-acked']);
  }, 60_000);
});
