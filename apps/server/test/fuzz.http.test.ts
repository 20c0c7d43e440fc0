import fc from 'fast-check';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';

/**
 * Property-based fuzzing of the three partner endpoints: random and malformed methods, paths,
 * query strings, headers, bodies and encodings. Whatever arrives, the service answers below 500
 * with the documented error shape (D8), and keeps running.
 */
const RUNS = Number(process.env.PLACARD_FUZZ_RUNS ?? 100_000);
const RAW_RUNS = Math.ceil(RUNS / 20);

const PATHS = ['/api/v1/campaigns/fetch', '/api/v1/campaigns/impression', '/api/v1/campaigns/click'];
const PARAMS = ['placement', 'limit', 'location', 'device', '__proto__', 'constructor', 'toString', 'x'];

interface Outcome {
  status: number;
  body: string;
  method: string;
}

describe('fuzzing the partner API', () => {
  let t: TestApp;
  let campaignId = 0;
  const port = () => Number(new URL(t.url).port);
  beforeAll(async () => {
    t = await createTestApp();
    [campaignId] = await t.addCampaigns([campaign({ placements: ['header_banner', 'sidebar_top'] })]);
  });
  afterAll(async () => {
    await t.close();
  });

  /** The documented shapes: an error body, or one of the contract's success bodies. */
  function checkOutcome({ status, body, method }: Outcome): void {
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(500);
    if (method === 'HEAD') return;
    const parsed = JSON.parse(body) as { status?: unknown; message?: unknown; data?: unknown };
    if (status >= 400) {
      expect(Object.keys(parsed).sort()).toEqual(['message', 'status']);
      expect(parsed.status).toBe('error');
      expect(typeof parsed.message).toBe('string');
    } else {
      expect(parsed.status).toBe('success');
    }
  }

  const send = (request: {
    method: string;
    path: string;
    headers: Record<string, string | string[]>;
    body: Buffer | undefined;
  }): Promise<Outcome> =>
    new Promise((resolve, reject) => {
      const outgoing = http.request(
        {
          host: '127.0.0.1',
          port: port(),
          method: request.method,
          path: request.path,
          headers: request.headers,
          // A connection per request: a request answered before its body was read must not
          // leave that body to be read as the next request on a shared connection.
          agent: false,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              method: request.method,
            }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });

  const queryPart = fc.oneof(
    fc
      .tuple(fc.constantFrom(...PARAMS), fc.string({ maxLength: 12 }))
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
    fc
      .tuple(
        fc.constantFrom(...PARAMS),
        fc.constantFrom(
          'header_banner',
          'US',
          'us',
          'mobile',
          '10',
          '0',
          '101',
          '1e2',
          '%',
          '%zz',
          '%00',
          '+',
          '',
        ),
      )
      .map(([k, v]) => `${k}=${v}`),
    fc.string({ maxLength: 20 }).map((raw) => encodeURI(raw)),
  );

  const deepJson = fc.integer({ min: 1, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
  const jsonBody = fc.oneof(
    fc
      .record(
        {
          campaignId: fc.oneof(
            fc.constant(campaignId),
            fc.integer(),
            fc.double(),
            fc.string(),
            fc.constant(null),
          ),
          placement: fc.oneof(
            fc.constantFrom('header_banner', 'sidebar_top', 'nope'),
            fc.string(),
            fc.integer(),
          ),
          location: fc.oneof(fc.constantFrom('US', 'gb', 'XX'), fc.string(), fc.constant(undefined)),
          device: fc.oneof(
            fc.constantFrom('mobile', 'Desktop', 'toaster'),
            fc.anything(),
            fc.constant(undefined),
          ),
        },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value)),
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc.constantFrom(
      '{"__proto__":{"campaignId":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"campaignId":1,"__proto__":null}',
    ),
    deepJson,
    fc.integer({ min: 16 * 1024 - 10, max: 40 * 1024 }).map((size) => `{"p":"${'x'.repeat(size)}"}`),
    fc.string({ maxLength: 40 }),
  );
  const body = fc.oneof(
    jsonBody.map((text) => Buffer.from(text, 'utf8')),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    fc.constant(undefined),
  );

  const headerValue = fc.string({ maxLength: 30 }).filter((value) => /^[\x20-\x7e]*$/.test(value));
  const request = fc.record({
    method: fc.oneof(
      fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
      fc.constantFrom('PROPFIND', 'PURGE'),
    ),
    path: fc
      .tuple(
        fc.constantFrom(
          ...PATHS,
          '/api/v1/campaigns/',
          '/api/v1/campaigns/fetch/',
          '/API/v1/campaigns/fetch',
          '/api/v1/../v1/campaigns/click',
        ),
        fc.array(queryPart, { maxLength: 6 }),
        fc.boolean(),
      )
      .map(([path, parts, question]) => (question || parts.length > 0 ? `${path}?${parts.join('&')}` : path)),
    auth: fc.oneof(
      fc.constant('valid'),
      fc.constant('none'),
      // Two Authorization headers: refused whichever is valid.
      fc.constant('twice'),
      headerValue.map((v) => `Bearer ${v}`),
      headerValue,
    ),
    contentType: fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=latin1',
      ),
      headerValue,
      fc.constant(undefined),
    ),
    encoding: fc.option(fc.constantFrom('gzip', 'deflate', 'br', 'chunked', 'identity')),
    idempotencyKey: fc.option(headerValue),
    requestId: fc.option(headerValue),
    body,
  });

  it(`answers ${RUNS.toLocaleString('en')} random requests below 500 with the documented shapes`, async () => {
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const headers: Record<string, string | string[]> = {};
        if (input.auth === 'valid') headers['authorization'] = `Bearer ${t.apiKey}`;
        else if (input.auth === 'twice') headers['authorization'] = [`Bearer ${t.apiKey}`, 'Bearer plc_x'];
        else if (input.auth !== 'none') headers['authorization'] = input.auth;
        if (input.contentType !== undefined) headers['content-type'] = input.contentType;
        if (input.encoding !== null) headers['content-encoding'] = input.encoding;
        if (input.idempotencyKey !== null) headers['idempotency-key'] = input.idempotencyKey;
        if (input.requestId !== null) headers['x-request-id'] = input.requestId;
        const sendsBody = input.body !== undefined && input.method !== 'GET' && input.method !== 'HEAD';
        const outcome = await send({
          method: input.method,
          path: input.path,
          headers,
          body: sendsBody ? input.body : undefined,
        });
        checkOutcome(outcome);
      }),
      { numRuns: RUNS, seed: 20261122 },
    );
  }, 600_000);

  /** Bytes Node's HTTP client would refuse to send: broken request lines, headers, encodings. */
  const rawRequest = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    fc
      .tuple(fc.constantFrom(...PATHS), fc.uint8Array({ maxLength: 40 }))
      .map(([path, junk]) =>
        Buffer.concat([
          Buffer.from(`GET ${path}?placement=`),
          Buffer.from(junk),
          Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
        ]),
      ),
    fc
      .tuple(fc.constantFrom(...PATHS), fc.string({ maxLength: 30 }))
      .map(([path, header]) =>
        Buffer.from(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Junk: ${header}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
        ),
      ),
    fc
      .integer({ min: 20_000, max: 80_000 })
      .map((size) =>
        Buffer.from(`GET /api/v1/campaigns/fetch HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(size)}\r\n\r\n`),
      ),
  );

  /** Sends raw bytes on a fresh connection and reads whatever comes back until the server closes it. */
  const sendRaw = (bytes: Buffer): Promise<string> =>
    new Promise((resolve) => {
      const socket = net.connect(port(), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.end(bytes);
      socket.setTimeout(5_000, () => socket.destroy());
    });

  it(`answers ${RAW_RUNS.toLocaleString('en')} malformed raw requests below 500 with the documented shape`, async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (bytes) => {
        const answer = await sendRaw(bytes);
        // Bytes that are not HTTP at all may just close the connection; otherwise every response
        // on it (a request can be answered before junk that follows it) has the documented shape.
        let rest = answer;
        while (rest.length > 0) {
          const end = rest.indexOf('\r\n\r\n');
          expect(end).toBeGreaterThan(0);
          const head = rest.slice(0, end);
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
          expect(status).toBeLessThan(500);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          const body = rest.slice(end + 4, end + 4 + length);
          if (status >= 400) {
            const parsed = JSON.parse(body) as Record<string, unknown>;
            expect(parsed['status']).toBe('error');
            expect(typeof parsed['message']).toBe('string');
          }
          rest = rest.slice(end + 4 + length);
        }
      }),
      { numRuns: RAW_RUNS, seed: 20261122 },
    );
  }, 600_000);

  it('is still serving afterwards', async () => {
    expect((await t.fetch('placement=header_banner')).statusCode).toBe(200);
  });
});
