import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { demoImpressionBody, postImpression } from '../helpers/tracking-client.js';

/**
 * Another process holding SQLite's write lock (an operator's long transaction, a backup tool, a
 * second server on the same file) must not freeze serving: fetch, served from memory, goes on at
 * its usual pace, and tracking answers 503 with Retry-After promptly instead of blocking the
 * server's only thread while it waits for the lock. Once the lock is released, events are stored.
 */
const HOLD_MS = 3_000;

describe('an outside writer holding the SQLite write lock', () => {
  const dataDir = tempDir('placard-sqlite-lock-');
  let server: ServerProcess;
  beforeAll(async () => {
    ensureBuilt();
    server = await startServerProcess({ PLACARD_DATA_DIR: dataDir }, ['--demo']);
  });
  afterAll(async () => {
    if (server) await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps fetch served, answers tracking 503 promptly, and stores events again once it is released', async () => {
    const apiKey = server.summary.demoApiKey!;
    const body = await demoImpressionBody(server);
    const agent = new http.Agent({ keepAlive: true });
    const fetchOnce = async () => {
      const started = performance.now();
      const response = await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      return performance.now() - started;
    };
    expect((await postImpression(server.url, apiKey, body, 'lock-before', agent)).status).toBe(200);

    const outsider = new BetterSqlite3(path.join(dataDir, 'placard.db'));
    outsider.exec('begin immediate');
    const heldAt = performance.now();
    try {
      // Tracking meets the lock: a prompt 503, never a wait as long as the lock is held.
      const started = performance.now();
      const refused = await postImpression(server.url, apiKey, body, 'lock-during', agent);
      const trackingMs = performance.now() - started;
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('1');
      expect(trackingMs).toBeLessThan(HOLD_MS / 3);

      // Fetch, with tracking requests meeting the lock all the while, is never held up by it.
      const fetchMs: number[] = [];
      const tracking: Promise<unknown>[] = [];
      let n = 0;
      while (performance.now() - heldAt < HOLD_MS - 300) {
        tracking.push(postImpression(server.url, apiKey, body, `lock-during-${n++}`, agent));
        fetchMs.push(await fetchOnce());
        // About 40 fetches a second, well inside the demo key's limit.
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await Promise.all(tracking);
      expect(fetchMs.length).toBeGreaterThan(10);
      expect(Math.max(...fetchMs)).toBeLessThan(HOLD_MS / 3);
    } finally {
      outsider.exec('commit');
      outsider.close();
    }

    expect((await postImpression(server.url, apiKey, body, 'lock-during', agent)).status).toBe(200);
    agent.destroy();
    expect(server.child.exitCode).toBeNull();
  });
});
