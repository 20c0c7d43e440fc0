import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/store/connect.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/engines.js';
import { ensureBuilt, shutdownReport, startServerProcess, type ServerProcess } from '../helpers/process.js';
import {
  demoImpressionBody,
  getOn,
  liftDemoKeyLimits,
  postImpression,
  type TrackingAnswer,
} from '../helpers/tracking-client.js';

/**
 * SIGTERM while partners keep connections open between calls, and while one client has sent only
 * half of its request. For the drain delay the instance fails readiness and answers every new
 * request 503 `service unavailable` with `Connection: close`; clients behind a balancer that
 * follows readiness are never reset nor refused; the process flushes what it acknowledged and
 * exits 0 within 10 s of the delay's end whatever a straggler does.
 */

/**
 * The drain delay these tests run with: far longer than a readiness probe or a request takes on
 * loopback even on a loaded machine, so that what happens during the delay is not a race.
 */
const DRAIN_DELAY_MS = 8_000;
/** What closing may take after the drain delay (see server.ts): the server times it from the signal. */
const CLOSE_BUDGET_MS = 10_000;

/** Exited 0 within its budget, by the server's own account (past it, it exits 1). */
function closedInTime(server: ServerProcess, code: number | null): void {
  expect(code).toBe(0);
  expect(shutdownReport(server)).toEqual({
    ms: expect.any(Number),
    budgetMs: DRAIN_DELAY_MS + CLOSE_BUDGET_MS,
  });
}

/** One request on a connection of its own, with what a client reads of the answer. */
function once(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
}

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
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  /** A demo server on a data directory of its own, and a tracking body for one of its campaigns. */
  async function startDemo() {
    const dataDir = tempDir('placard-shutdown-');
    dirs.push(dataDir);
    const server = await startServerProcess(
      { PLACARD_DATA_DIR: dataDir, PLACARD_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS) },
      ['--demo'],
    );
    servers.push(server);
    await liftDemoKeyLimits(server);
    return { dataDir, server, body: await demoImpressionBody(server) };
  }

  it('behind a balancer that follows readiness: resets and refuses no connection, answers or 503s every request, loses nothing', async () => {
    const { dataDir, server, body } = await startDemo();
    const apiKey = server.summary.demoApiKey!;
    const partner = { authorization: `Bearer ${apiKey}` };
    const operator = { authorization: `Bearer ${server.summary.adminToken}` };

    // A load balancer's health check: /readyz every 100 ms on a new connection; 2 failures in a
    // row take the instance out, and no client sends it anything more.
    let up = true;
    let checking = true;
    const balancer = (async () => {
      let failures = 0;
      while (checking && up) {
        const answer = await once(`${server.url}/readyz`);
        failures = 'status' in answer && answer.status === 200 ? 0 : failures + 1;
        if (failures >= 2) up = false;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // 48 clients, each with its own keep-alive connection, cycling over a partner's calls, a probe
    // and an operator's call, with pauses between them, so that at the signal some connections are
    // mid-request and others sit idle between requests; each sends only while the balancer has
    // the instance up.
    const outcomes: Outcome[] = [];
    let exit: Promise<number | null> | undefined;
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
        for (let i = 0; up; i++) {
          const outcome = {
            key: `ka-${n}-${i}`,
            impression: (n + i) % 4 === 0,
            ...(await call(n, i, agent)),
          };
          outcomes.push(outcome);
          if (outcomes.length === 48 * 20 && !exit) {
            exit = server.stop('SIGTERM');
          }
          if (outcome.error === 'ECONNREFUSED') return;
          await new Promise((resolve) => setTimeout(resolve, (n * 7 + i * 13) % 40));
        }
      } finally {
        agent.destroy();
      }
    };
    await Promise.all(Array.from({ length: 48 }, (_, n) => client(n)));
    checking = false;
    await balancer;
    closedInTime(server, (await exit) ?? null);
    // The balancer took the instance out before it stopped listening, so no client met a closed
    // port or a connection reset: every request was answered, or refused with 503 and Retry-After.
    const kinds = new Set(
      outcomes.map((o) =>
        o.status === 200
          ? 'answered'
          : o.status === 503 && o.retryAfter
            ? 'unavailable'
            : (o.error ?? `status ${o.status}`),
      ),
    );
    expect([...kinds].filter((kind) => !['answered', 'unavailable'].includes(kind))).toEqual([]);
    // Nothing unacknowledged was stored (a reset request was never read), nothing acknowledged lost.
    const acknowledged = outcomes
      .filter((o) => o.impression && o.status === 200)
      .map((o) => o.key)
      .sort();
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(await countedKeys(dataDir, 'ka-')).toEqual(acknowledged);
  });

  it('exits 0 within 10 s of the drain delay with a half-sent request open, after storing what it acknowledged', async () => {
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

    closedInTime(server, await server.stop('SIGTERM'));
    straggler.destroy();
    expect(await countedKeys(dataDir, 'half-')).toEqual(['half-acked']);
  });

  it('while draining, fails readiness and answers every new connection 503 with Connection: close, probes aside', async () => {
    const { server } = await startDemo();
    const exit = server.stop('SIGTERM');
    // Readiness fails as soon as shutdown begins: that is what the balancer waits for.
    let ready = await once(`${server.url}/readyz`);
    while ('status' in ready && ready.status === 200) ready = await once(`${server.url}/readyz`);
    expect(ready).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect('body' in ready && JSON.parse(ready.body)).toMatchObject({
      message: 'not ready: shutdown (shutting down)',
    });

    // Within the drain delay, any request on a new connection, partner's, operator's or a
    // browser's, is answered with the contract's 503 (the management API's with its code) and the
    // connection closes after it.
    const partner = { authorization: `Bearer ${server.summary.demoApiKey}` };
    const operator = { authorization: `Bearer ${server.summary.adminToken}` };
    const answers = await Promise.all([
      once(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, partner),
      once(`${server.url}/admin/v1/placements`, operator),
      once(`${server.url}/`),
    ]);
    for (const [index, answer] of answers.entries()) {
      expect(answer).toMatchObject({
        status: 503,
        headers: { 'retry-after': '1', connection: 'close' },
      });
      expect('body' in answer && JSON.parse(answer.body)).toEqual({
        status: 'error',
        ...(index === 1 && { code: 'unavailable' }),
        message: 'service unavailable',
      });
    }
    // The process is still alive, for an orchestrator's liveness probe.
    expect(await once(`${server.url}/healthz`)).toMatchObject({ status: 200 });
    expect(await exit).toBe(0);
  });
});
