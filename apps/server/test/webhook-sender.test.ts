import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendWebhook, type SendOptions } from '../src/services/webhook-sender.js';

/**
 * The webhook client against real HTTP servers on loopback, and against names a test resolver maps to
 * the address classes an attacker would aim at (server-side request forgery): a refused address is
 * never connected to, however its name resolves.
 */
interface Server {
  url: string;
  port: number;
  requests: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  );
});

async function serve(
  handle: (request: http.IncomingMessage, response: http.ServerResponse) => void,
): Promise<Server> {
  const requests: Server['requests'] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      requests.push({ headers: request.headers, body });
      handle(request, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hooks`, port, requests };
}

const LOOPBACK: SendOptions = { allowLoopback: true, allowPrivateNetworks: false };
const STRICT: SendOptions = { allowLoopback: false, allowPrivateNetworks: false };
const request = (url: string) => ({
  url,
  headers: { 'webhook-id': 'msg_1' },
  body: '{"type":"webhook.test"}',
});

/** A resolver that answers `name` with `addresses` (and fails any other name), as DNS would. */
function resolver(answers: Record<string, string[]>): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const addresses = answers[hostname];
    if (!addresses)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    const list = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) return callback(null, list);
    return callback(null, list[0].address, list[0].family);
  }) as unknown as LookupFunction;
}

describe('sendWebhook', () => {
  it('POSTs the body with the given headers and takes a 2xx as delivered', async () => {
    const server = await serve((_request, response) => response.writeHead(204).end());
    const result = await sendWebhook(request(server.url), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: true, status: 204, answer: '', error: null }));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].body).toBe('{"type":"webhook.test"}');
    expect(server.requests[0].headers).toEqual(
      expect.objectContaining({
        'webhook-id': 'msg_1',
        'content-type': 'application/json',
        'user-agent': 'Placard-Webhooks/1',
      }),
    );
  });

  it('takes any other status as a failure, with the first bytes of the answer', async () => {
    const server = await serve((_request, response) => response.writeHead(500).end('database down'));
    expect(await sendWebhook(request(server.url), LOOPBACK)).toEqual(
      expect.objectContaining({ ok: false, status: 500, answer: 'database down', error: null }),
    );
  });

  it('does not follow a redirect', async () => {
    const target = await serve((_request, response) => response.writeHead(200).end());
    const redirecting = await serve((_request, response) =>
      response.writeHead(302, { location: target.url }).end(),
    );
    const result = await sendWebhook(request(redirecting.url), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: false, status: 302 }));
    expect(target.requests).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer within the deadline', async () => {
    const server = await serve(() => undefined);
    const result = await sendWebhook(request(server.url), { ...LOOPBACK, timeoutMs: 300 });
    expect(result).toEqual(
      expect.objectContaining({ ok: false, status: null, error: 'timed out after 300 ms' }),
    );
  });

  it('reads no more of a large answer than it keeps', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200);
      response.end('x'.repeat(1_000_000));
    });
    const result = await sendWebhook(request(server.url), { ...LOOPBACK, maxAnswerBytes: 100 });
    expect(result.ok).toBe(true);
    expect(result.answer).toBe('x'.repeat(100));
  });

  it('refuses loopback unless allowed, before connecting', async () => {
    const server = await serve((_request, response) => response.writeHead(200).end());
    const literal = await sendWebhook(request(`https://127.0.0.1:${server.port}/hooks`), STRICT);
    expect(literal).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(literal.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    // The name, through the machine's own resolver.
    const named = await sendWebhook(request(`https://localhost:${server.port}/hooks`), STRICT);
    expect(named.error).toMatch(/^refused: localhost is this machine/);
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['internal.example', ['10.0.0.5'], 'private'],
    ['router.example', ['192.168.1.1'], 'private'],
    ['metadata.example', ['169.254.169.254'], 'metadata'],
    ['link.example', ['fe80::1'], 'link-local'],
    ['mapped.example', ['::ffff:127.0.0.1'], 'loopback'],
    ['ec2.example', ['fd00:ec2::254'], 'metadata'],
    ['mixed.example', ['93.184.215.14', '10.0.0.5'], 'private'],
  ])('refuses %s, which resolves to %j (%s), without connecting', async (name, addresses, why) => {
    // Every name resolves to loopback too, where a server listens: a connection would reach it.
    const server = await serve((_request, response) => response.writeHead(200).end());
    const lookup = resolver({ [name]: [...addresses, '127.0.0.1'] });
    const result = await sendWebhook(request(`https://${name}:${server.port}/hooks`), { ...STRICT, lookup });
    expect(result).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(result.error).toMatch(new RegExp(`^refused: ${name.replace('.', '\\.')} resolves to .*${why}`));
    expect(server.requests).toHaveLength(0);
  });

  it('delivers to a name that resolves to allowed addresses only', async () => {
    const server = await serve((_request, response) => response.writeHead(200).end('ok'));
    const lookup = resolver({ 'dev.example': ['127.0.0.1'] });
    const result = await sendWebhook(request(`http://dev.example:${server.port}/hooks`), {
      ...LOOPBACK,
      lookup,
    });
    // Plain http to a name is refused even with loopback allowed: only this machine's own names.
    expect(result.error).toMatch(/must use https/);
    const viaLocalhost = await sendWebhook(request(`http://localhost:${server.port}/hooks`), {
      ...LOOPBACK,
      lookup: resolver({ localhost: ['127.0.0.1'] }),
    });
    expect(viaLocalhost).toEqual(expect.objectContaining({ ok: true, status: 200, answer: 'ok' }));
  });

  it('says what failed when the name does not resolve or nothing listens', async () => {
    const unknown = await sendWebhook(request('https://nowhere.example/hooks'), {
      ...STRICT,
      lookup: resolver({}),
    });
    expect(unknown.error).toMatch(/ENOTFOUND nowhere\.example/);
    const closed = await sendWebhook(request('http://127.0.0.1:9/hooks'), LOOPBACK);
    expect(closed).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(closed.error).toMatch(/ECONNREFUSED/);
  });
});
