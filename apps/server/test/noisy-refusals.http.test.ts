import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { eventually } from './helpers/eventually.js';

/**
 * What a client can cause as often as it likes (uploads it abandons halfway, forms without their
 * CSRF token) is counted in /metrics and logged at most once a minute with how many there were,
 * never a line (or an error with its stack) each.
 */
describe('refusals a client can repeat at will', () => {
  let t: TestApp;
  const lines: Array<{ level: number; msg: string; count?: number; err?: unknown }> = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    t = await createTestApp({ logger: pino({ level: 'debug' }, sink) });
  });
  afterAll(() => t.close());

  /** Sends a request's head and half its body, then closes the connection. */
  const abandonUpload = (path: string, headers: string) =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 1000\r\n\r\n{"name":`);
        // Closed once the server has read the head and started on the body.
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });

  const metric = async (name: string) => {
    const text = (
      await t.request({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${t.adminToken}` },
      })
    ).body;
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  };

  const until = (done: () => Promise<boolean>) => eventually(done, 'the refusals counted and logged');

  it('counts abandoned uploads on every API and logs one line for them, not an error each', async () => {
    const json = 'Content-Type: application/json\r\n';
    for (let i = 0; i < 3; i++) {
      await abandonUpload('/api/v1/campaigns/impression', `Authorization: Bearer ${t.apiKey}\r\n${json}`);
      await abandonUpload('/admin/v1/advertisers', `Authorization: Bearer ${t.adminToken}\r\n${json}`);
      await abandonUpload(
        '/sign-in',
        `Origin: ${t.url}\r\nContent-Type: application/x-www-form-urlencoded\r\n`,
      );
    }
    await until(async () => (await metric('placard_aborted_uploads_total')) >= 9);
    expect(await metric('placard_aborted_uploads_total')).toBe(9);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const logged = lines.filter((line) => /whole body/.test(line.msg));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 40, count: 1 });
  });

  it('counts forms refused for their CSRF token and logs one line for them', async () => {
    const browser = new BrowserClient(t.url);
    await browser.get('/sign-in');
    for (let i = 0; i < 20; i++) {
      const refused = await browser.post('/sign-in', {
        _csrf: 'forged',
        email: 'a@example.com',
        password: 'x',
      });
      expect(refused.status).toBe(403);
    }
    expect(await metric('placard_csrf_refusals_total')).toBe(20);
    // Only the one line at info or above: the CSRF plugin's own line per refusal is at debug.
    expect(lines.filter((line) => line.level >= 30 && /csrf/i.test(line.msg))).toHaveLength(1);
  });
});
