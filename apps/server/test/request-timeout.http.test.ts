import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

/** Short, so the test waits little; Node checks for it every tenth of it. */
const REQUEST_TIMEOUT_MS = 400;

/**
 * A request too slow to arrive is answered `408` by Node's HTTP server and its connection ended for
 * writing; a client may send its body after that (its half of the connection is still open). That
 * request was answered as failed, and a client retries such an answer: storing it would count the
 * event twice.
 */
describe.each(ENGINES)('a tracking request answered 408 on %s', (engine) => {
  let t: TestApp;
  let id: number;
  beforeEach(async () => {
    t = await createTestApp({ engine, requestTimeoutMs: REQUEST_TIMEOUT_MS });
    [id] = await t.addCampaigns([campaign()]);
  });
  afterEach(() => t.close());

  const storedEvents = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('stores nothing of it, even when its body arrives after the 408', async () => {
    const body = JSON.stringify({ campaignId: id, placement: 'header_banner' });
    const { port } = new URL(t.url);
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.setEncoding('utf8');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received.includes('\r\n\r\n')) resolve();
      }),
    );
    socket.write(
      `POST /api/v1/campaigns/impression HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    // Nothing more until the server has given up on the request.
    await answered;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    // Then the body, on the half of the connection the server still reads.
    socket.end(body);
    await closed;
    // The same request in full: it is stored, so a request that reached the store would be seen.
    expect((await t.track('impression', { campaignId: id, placement: 'header_banner' })).statusCode).toBe(
      200,
    );
    expect(await storedEvents()).toBe(1);
  });
});
