import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DRAIN_DELAY_MS } from '../src/config.js';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, shutdownReport, startServerProcess } from './helpers/process.js';

interface Outcome {
  status?: number;
  retryAfter?: string;
  error?: string;
  key: string;
  answeredAt: number;
}

/** One impression on its own connection, so a request is either accepted whole or refused. */
function impression(url: string, apiKey: string, body: string, key: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(
      `${url}/api/v1/campaigns/impression`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': key,
          connection: 'close',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            retryAfter: response.headers['retry-after'],
            key,
            answeredAt: Date.now(),
          }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.code ?? error.message, key, answeredAt: Date.now() }),
    );
    request.end(body);
  });
}

describe('shutdown', () => {
  const dataDir = tempDir('placard-shutdown-');
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  it('on SIGTERM answers every accepted request, commits the last batch and exits 0 within 10 s of the drain delay', async () => {
    const server = await startServerProcess({ PLACARD_DATA_DIR: dataDir }, ['--demo']);
    const apiKey = server.summary.demoApiKey!;
    const fetched = await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const campaignId = ((await fetched.json()) as { data: Array<{ id: number }> }).data[0].id;
    const body = JSON.stringify({ campaignId, placement: 'header_banner' });

    let answered = 0;
    let signalledAt = 0;
    let exit: Promise<number | null> | undefined;
    const outcomes = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        impression(server.url, apiKey, body, `drain-${i}`).then((outcome) => {
          if (++answered === 40) {
            signalledAt = Date.now();
            exit = server.stop('SIGTERM');
          }
          return outcome;
        }),
      ),
    );
    // Within 10 s of the end of the drain delay (PLACARD_DRAIN_DELAY_MS, left at its default), by
    // the server's own timer from the signal: past it, it would have exited 1.
    expect(await exit).toBe(0);
    expect(shutdownReport(server)).toEqual({
      ms: expect.any(Number),
      budgetMs: DEFAULT_DRAIN_DELAY_MS + 10_000,
    });

    // Every request was answered 200, refused with 503 + Retry-After once closing began, or
    // refused at connect once the port closed; none was dropped half-way.
    const kinds = outcomes.map((o) =>
      o.status === 200
        ? 'ok'
        : o.status === 503 && o.retryAfter
          ? 'unavailable'
          : (o.error ?? `status ${o.status}`),
    );
    expect(kinds.filter((kind) => !['ok', 'unavailable', 'ECONNREFUSED'].includes(kind))).toEqual([]);
    const acknowledged = outcomes.filter((o) => o.status === 200);
    // Requests in flight when the signal came were answered, not dropped.
    expect(acknowledged.filter((o) => o.answeredAt >= signalledAt).length).toBeGreaterThan(0);

    // Each acknowledged event is in the store exactly once; nothing unacknowledged is counted.
    const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
    try {
      const rows = await store.db
        .selectFrom('events')
        .select(['idempotency_key', 'verdict'])
        .where('idempotency_key', 'like', 'drain-%')
        .execute();
      const stored = rows.map((row) => row.idempotency_key).sort();
      expect(stored).toEqual(acknowledged.map((o) => o.key).sort());
      expect(rows.every((row) => row.verdict === 'counted')).toBe(true);
    } finally {
      await store.close();
    }
  });
});
