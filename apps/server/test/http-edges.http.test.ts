import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';

/** Sends raw bytes on a fresh connection and reads everything until the server closes it. */
function sendRaw(url: string, bytes: string): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.setTimeout(5_000, () => socket.destroy());
    socket.end(bytes);
  });
}

/** The status, headers (lower-cased names) and body of the one raw response in `text`. */
function parse(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('requests Node would answer bare', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  for (const path of ['/healthz', '/api/v1/campaigns/fetch?placement=header_banner', '/admin/v1/partners']) {
    it(`answers an HTTP/1.1 request without Host on ${path} with the error shape and a request id`, async () => {
      const answer = parse(await sendRaw(t.url, `GET ${path} HTTP/1.1\r\nX-Request-Id: edge-1\r\n\r\n`));
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.headers['x-request-id']).toBe('edge-1');
      expect(answer.headers['connection']).toBe('close');
      // A management 400 has its code, and lists its problems, here none.
      const problems = path.startsWith('/admin/') ? { code: 'invalid_request', problems: [] } : {};
      expect(JSON.parse(answer.body)).toEqual({
        status: 'error',
        message: 'Host header is required',
        ...problems,
      });
    });
  }

  it('still serves HTTP/1.0 without Host, which does not require one', async () => {
    const answer = parse(await sendRaw(t.url, 'GET /healthz HTTP/1.0\r\n\r\n'));
    expect(answer.status).toBe(200);
  });

  it('refuses an expectation other than 100-continue with 417 and the error shape', async () => {
    const answer = parse(
      await sendRaw(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n'),
    );
    expect(answer.status).toBe(417);
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(JSON.parse(answer.body)).toEqual({
      status: 'error',
      message: 'only the expectation 100-continue is supported',
    });
  });

  it('still honours Expect: 100-continue', async () => {
    const body = '{}';
    const text = await sendRaw(
      t.url,
      `POST /api/v1/campaigns/impression HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n')).toBe(true);
    expect(text).toMatch(/HTTP\/1\.1 401 Unauthorized/);
  });

  describe('a header that may come once, sent twice', () => {
    const apis = [
      { name: 'partner API', path: '/api/v1/campaigns/fetch?placement=header_banner', problems: {} },
      {
        name: 'management API',
        path: '/admin/v1/partners',
        problems: { code: 'invalid_request', problems: [] },
      },
      { name: 'dashboard', path: '/sign-in', problems: {} },
    ];
    for (const { name, path, problems } of apis) {
      it(`refuses two Authorization headers on the ${name} with 400, whichever comes first`, async () => {
        const token = path.startsWith('/admin/') ? t.adminToken : t.apiKey;
        for (const [first, second] of [
          [token, 'wrong'],
          ['wrong', token],
          [token, token],
        ]) {
          const answer = parse(
            await sendRaw(
              t.url,
              `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${first}\r\nauthorization: Bearer ${second}\r\n\r\n`,
            ),
          );
          expect(answer.status).toBe(400);
          expect(answer.headers['content-type']).toMatch(/^application\/json/);
          expect(answer.headers['x-request-id']).toBeTruthy();
          expect(JSON.parse(answer.body)).toEqual({
            status: 'error',
            message: 'the Authorization header must be sent once',
            ...problems,
          });
        }
      });

      it(`refuses two Host headers on the ${name} with 400`, async () => {
        const answer = parse(
          await sendRaw(
            t.url,
            `GET ${path} HTTP/1.1\r\nHost: x\r\nHOST: y\r\nAuthorization: Bearer ${t.apiKey}\r\n\r\n`,
          ),
        );
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toEqual({
          status: 'error',
          message: 'the Host header must be sent once',
          ...problems,
        });
      });
    }

    it('still serves a request whose other headers repeat', async () => {
      const answer = parse(
        await sendRaw(
          t.url,
          `GET /api/v1/campaigns/fetch?placement=header_banner HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nAccept: */*\r\nAccept: */*\r\nConnection: close\r\n\r\n`,
        ),
      );
      expect(answer.status).toBe(200);
    });
  });
});
