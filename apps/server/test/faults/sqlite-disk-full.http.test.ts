import type BetterSqlite3 from 'better-sqlite3';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from '../helpers/app.js';

/**
 * A full disk: SQLite's `max_page_count`, lowered to the pages the file has, makes every write that
 * needs a new page fail with SQLITE_FULL, exactly as a full file system does. Reads keep working.
 * Partners get 503 with Retry-After, readiness says the store is failing, the log says why once,
 * and everything recovers by itself when there is room again.
 */
describe('a full disk under the SQLite store', () => {
  let t: TestApp;
  let campaignId: number;
  const lines: Array<{ level: number; msg: string; err?: { message?: string } }> = [];
  let sqlite: BetterSqlite3.Database;

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    t = await createTestApp({ logger });
    [campaignId] = (await t.addCampaigns([
      campaign({ title: 'Full', destinationUrl: 'https://a.example/' }),
    ])) as [number];
    // The serving connection itself: max_page_count belongs to a connection.
    sqlite = (t.store as unknown as { connection: { sqlite: BetterSqlite3.Database } }).connection.sqlite;
  });
  afterAll(() => t.close());

  const track = (n: number) =>
    t.track('impression', { campaignId, placement: 'header_banner' }, { 'idempotency-key': `full-${n}` });

  it('answers 503, fails readiness, logs the cause once, and recovers when there is room', async () => {
    expect((await track(0)).statusCode).toBe(200);
    const pages = sqlite.pragma('page_count', { simple: true }) as number;
    sqlite.pragma(`max_page_count = ${pages}`);

    // Fill what room the pages had left, then every event is refused.
    let refused = 0;
    for (let n = 1; n <= 2_000 && refused < 30; n++) {
      const answer = await track(n);
      if (answer.statusCode === 503) {
        expect(answer.headers['retry-after']).toBe('1');
        refused++;
      } else expect(answer.statusCode).toBe(200);
    }
    expect(refused).toBe(30);

    const ready = await t.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ message: 'not ready: store (writes failing)' });
    const detailed = await t.request({
      method: 'GET',
      url: '/readyz',
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(detailed.json().checks.store).toMatch(
      /^writes failing since .*: database or disk is full \(SQLITE_FULL\)$/,
    );

    // One line that names the cause, not one per batch, and never the rollback that hid it.
    const failures = lines.filter((line) => line.msg.startsWith('storing events failed'));
    expect(failures.map((line) => line.msg)).toEqual([
      'storing events failed: database or disk is full (SQLITE_FULL)',
    ]);
    expect(lines.filter((line) => JSON.stringify(line).includes('cannot rollback'))).toEqual([]);

    // Room again: events are stored and readiness recovers, with no one's help.
    sqlite.pragma('max_page_count = 1073741823');
    expect((await track(5_000)).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect(lines.some((line) => line.msg === 'storing events works again')).toBe(true);
  });
});
