import dns from 'node:dns';
import http from 'node:http';
import net, { type AddressInfo, type LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendWebhook, type SendOptions, type WebhookRequest } from '../src/services/webhook-sender.js';
import { freePort } from './helpers/free-port.js';

/**
 * The webhook client against real HTTP servers on loopback, and against names a test resolver maps
 * to the addresses an attacker would aim at (server-side request forgery). Each server counts the
 * connections made to it, so "never connected" is seen, not inferred from the error.
 */
interface Receiver {
  url: string;
  port: number;
  /** Connections accepted, whether or not a request came over them. */
  connections: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  /** Resolves once every connection accepted so far has closed. */
  allClosed(): Promise<void>;
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

/** A receiver on 127.0.0.1 that records each request, then lets `answer` answer it (or not). */
async function receiver(
  answer: (response: http.ServerResponse) => void = (response) => response.writeHead(204).end(),
): Promise<Receiver> {
  const open = new Set<Promise<void>>();
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      found.requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
      });
      answer(response);
    });
  });
  server.on('connection', (socket) => {
    found.connections++;
    open.add(new Promise((resolve) => socket.once('close', () => resolve())));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const found: Receiver = {
    url: `http://127.0.0.1:${port}/hooks?account=7`,
    port,
    connections: 0,
    requests: [],
    allClosed: async () => {
      await Promise.all(open);
    },
  };
  return found;
}

const LOOPBACK: SendOptions = { allowLoopback: true, allowPrivateNetworks: false };
const STRICT: SendOptions = { allowLoopback: false, allowPrivateNetworks: false };
const BODY = '{"type":"webhook.test","data":{"note":"été"}}';
const hook = (url: string, headers: Record<string, string> = { 'webhook-id': 'msg_1' }): WebhookRequest => ({
  url,
  headers,
  body: BODY,
});

/**
 * A resolver answering each name in `answers` with its addresses, as DNS would (`ENOTFOUND` for any
 * other), in either of the shapes a `lookup` answers in; `calls` records what it was asked.
 */
function resolver(answers: Record<string, string[]>) {
  const calls: Array<{ hostname: string; all: boolean }> = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    calls.push({ hostname, all: options.all === true });
    const addresses = answers[hostname];
    if (!addresses) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      return callback(error, '', 0);
    }
    const list = addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
    if (options.all) return callback(null, list);
    return callback(null, list[0].address, list[0].family);
  };
  return { lookup, calls };
}

describe('sendWebhook delivers', () => {
  it('POSTs the body with the given headers, and takes a 2xx as delivered', async () => {
    const target = await receiver((response) => response.writeHead(200).end('thanks'));
    const result = await sendWebhook(
      hook(target.url, { 'webhook-id': 'msg_1', 'webhook-timestamp': '1' }),
      LOOPBACK,
    );
    expect(result).toEqual({
      ok: true,
      status: 200,
      durationMs: expect.any(Number),
      answer: 'thanks',
      error: null,
    });
    expect(result.durationMs).toBeGreaterThan(0);
    expect(target.requests).toEqual([
      {
        method: 'POST',
        url: '/hooks?account=7',
        body: BODY,
        headers: expect.objectContaining({
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(BODY)),
          'user-agent': 'Placard-Webhooks/1',
          'webhook-id': 'msg_1',
          'webhook-timestamp': '1',
        }),
      },
    ]);
  });

  it('sends a user-agent given in the headers instead of its own', async () => {
    const target = await receiver();
    const result = await sendWebhook(hook(target.url, { 'User-Agent': 'Other/2' }), LOOPBACK);
    expect(result.ok).toBe(true);
    expect(target.requests[0].headers['user-agent']).toBe('Other/2');
  });

  it('finds the name localhost with the real resolver where loopback is allowed', async () => {
    const target = await receiver();
    const result = await sendWebhook(hook(`http://localhost:${target.port}/hooks`), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: true, status: 204, error: null }));
    expect(target.requests).toHaveLength(1);
  });

  it('answers either shape of lookup Node asks for, and always asks the resolver for every address', async () => {
    const target = await receiver();
    const { lookup, calls } = resolver({ localhost: ['127.0.0.1'] });
    const send = () => sendWebhook(hook(`http://localhost:${target.port}/hooks`), { ...LOOPBACK, lookup });
    const before = net.getDefaultAutoSelectFamily();
    try {
      // Trying each address in turn (Node 20's default) asks with `all: true`; one at a time asks without.
      for (const autoSelectFamily of [true, false]) {
        net.setDefaultAutoSelectFamily(autoSelectFamily);
        expect(await send(), `autoSelectFamily ${autoSelectFamily}`).toEqual(
          expect.objectContaining({ ok: true, status: 204 }),
        );
      }
    } finally {
      net.setDefaultAutoSelectFamily(before);
    }
    expect(calls).toEqual([
      { hostname: 'localhost', all: true },
      { hostname: 'localhost', all: true },
    ]);
    expect(target.requests).toHaveLength(2);
  });
});

describe('sendWebhook fails an attempt', () => {
  it('on any status but 2xx, keeping the first bytes of the answer', async () => {
    const target = await receiver((response) => response.writeHead(500).end('database down'));
    expect(await sendWebhook(hook(target.url), LOOPBACK)).toEqual(
      expect.objectContaining({ ok: false, status: 500, answer: 'database down', error: null }),
    );
  });

  it('on a redirect, which it does not follow', async () => {
    const elsewhere = await receiver((response) => response.writeHead(200).end());
    const redirecting = await receiver((response) =>
      response.writeHead(302, { location: elsewhere.url }).end('moved'),
    );
    const result = await sendWebhook(hook(redirecting.url), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: false, status: 302, answer: 'moved', error: null }));
    expect(redirecting.requests).toHaveLength(1);
    expect(elsewhere.connections).toBe(0);
  });

  it('when no answer comes within the deadline, and closes the connection', async () => {
    const silent = await receiver(() => undefined);
    // Long enough for the request to reach the receiver on a loaded machine before the deadline.
    const result = await sendWebhook(hook(silent.url), { ...LOOPBACK, timeoutMs: 2_000 });
    expect(result).toEqual(
      expect.objectContaining({ ok: false, status: null, answer: '', error: 'timed out after 2000 ms' }),
    );
    // Bounded: the deadline, give or take a loaded machine's scheduling.
    expect(result.durationMs).toBeGreaterThanOrEqual(1_999);
    expect(result.durationMs).toBeLessThan(30_000);
    expect(silent.requests).toHaveLength(1);
    await silent.allClosed();
  });

  it('when the answer has begun but does not end within the deadline, with its status and first bytes', async () => {
    const slow = await receiver((response) => {
      response.writeHead(200);
      response.write('partial');
    });
    // Long enough for the status and first bytes to arrive on a loaded machine before the deadline.
    expect(await sendWebhook(hook(slow.url), { ...LOOPBACK, timeoutMs: 3_000 })).toEqual(
      expect.objectContaining({
        ok: false,
        status: 200,
        answer: 'partial',
        error: 'timed out after 3000 ms',
      }),
    );
  });

  it('when the receiver closes the connection without answering', async () => {
    const rude = await receiver((response) => response.socket?.destroy());
    const result = await sendWebhook(hook(rude.url), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: false, status: null, answer: '' }));
    expect(result.error).toMatch(/ECONNRESET/);
  });

  it('when nothing listens, or the name is not found, saying which', async () => {
    const closed = await sendWebhook(hook(`http://127.0.0.1:${await freePort()}/hooks`), LOOPBACK);
    expect(closed).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(closed.error).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    const { lookup } = resolver({});
    const unknown = await sendWebhook(hook('https://nowhere.example/hooks'), { ...STRICT, lookup });
    expect(unknown).toEqual(
      expect.objectContaining({ ok: false, status: null, error: 'getaddrinfo ENOTFOUND nowhere.example' }),
    );
  });

  it('when TLS fails, here because the receiver speaks plain http', async () => {
    const plain = await receiver();
    const result = await sendWebhook(hook(`https://127.0.0.1:${plain.port}/hooks`), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: false, status: null, error: expect.any(String) }));
    expect(plain.connections).toBe(1);
    expect(plain.requests).toHaveLength(0);
  });

  it('without throwing, when Node will not send a header', async () => {
    const target = await receiver();
    const result = await sendWebhook(hook(target.url, { 'x-broken': 'one\r\ntwo' }), LOOPBACK);
    expect(result).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(result.error).toMatch(/ERR_INVALID_CHAR/);
    expect(target.connections).toBe(0);
  });
});

describe('sendWebhook reads no more of an answer than it keeps', () => {
  it('cuts a 1 MB answer to maxAnswerBytes (1 KiB by default)', async () => {
    const large = await receiver((response) => response.writeHead(200).end('x'.repeat(1_000_000)));
    expect(await sendWebhook(hook(large.url), LOOPBACK)).toEqual(
      expect.objectContaining({ ok: true, status: 200, answer: 'x'.repeat(1_024), error: null }),
    );
    expect((await sendWebhook(hook(large.url), { ...LOOPBACK, maxAnswerBytes: 100 })).answer).toBe(
      'x'.repeat(100),
    );
  });

  it('stops reading once it has them, without waiting for an answer that does not end', async () => {
    const endless = await receiver((response) => {
      response.writeHead(200);
      response.write('y'.repeat(4_096));
    });
    // Were the rest waited for, this would be a timeout after 60 s.
    const result = await sendWebhook(hook(endless.url), { ...LOOPBACK, timeoutMs: 60_000 });
    expect(result).toEqual(
      expect.objectContaining({ ok: true, status: 200, answer: 'y'.repeat(1_024), error: null }),
    );
    await endless.allClosed();
  });

  it('cuts at the end of a character, never inside one', async () => {
    const accented = await receiver((response) => response.writeHead(400).end('é'.repeat(600)));
    const result = await sendWebhook(hook(accented.url), { ...LOOPBACK, maxAnswerBytes: 101 });
    expect(result.answer).toBe('é'.repeat(50));
  });
});

describe('sendWebhook refuses what could reach inside the network, without connecting', () => {
  it('loopback unless it is allowed', async () => {
    const target = await receiver();
    expect(await sendWebhook(hook(`https://127.0.0.1:${target.port}/hooks`), STRICT)).toEqual(
      expect.objectContaining({
        ok: false,
        status: null,
        error:
          "refused: the URL must not go to 127.0.0.1, a loopback address: this machine is open only to the operator's own endpoints, where PLACARD_WEBHOOKS_ALLOW_LOOPBACK=true is set for the server and for the placard command",
      }),
    );
    expect((await sendWebhook(hook(target.url), STRICT)).error).toMatch(/^refused: the URL must use https/);
    expect(target.connections).toBe(0);
    expect((await sendWebhook(hook(target.url), LOOPBACK)).ok).toBe(true);
    expect(target.connections).toBe(1);
  });

  it('the name localhost, through the real resolver too, unless loopback is allowed', async () => {
    const target = await receiver();
    // Refused from the name alone, before any lookup.
    expect((await sendWebhook(hook(`https://localhost:${target.port}/hooks`), STRICT)).error).toMatch(
      /^refused: the URL must not name this machine \(localhost\)/,
    );
    // Another name, which the real resolver answers as it answers localhost: refused from its addresses.
    const asked: string[] = [];
    const lookup: LookupFunction = (hostname, options, callback) => {
      asked.push(hostname);
      dns.lookup('localhost', options, callback);
    };
    const result = await sendWebhook(hook(`https://receiver.example:${target.port}/hooks`), {
      ...STRICT,
      lookup,
    });
    expect(result).toEqual(expect.objectContaining({ ok: false, status: null }));
    expect(result.error).toMatch(
      /^refused: (127\.\d+\.\d+\.\d+|::1) is a loopback address \(receiver\.example resolves to it\)$/,
    );
    expect(asked).toEqual(['receiver.example']);
    expect(target.connections).toBe(0);
  });

  // Where loopback is allowed, each name resolves first to 127.0.0.1, where the receiver listens: a
  // guard that let the refused address through would connect there first (and never try the refused
  // address itself). ::ffff:127.0.0.1 is that receiver already.
  it.each([
    ['internal.example', ['10.0.0.5'], '10.0.0.5 is a private address', LOOPBACK],
    ['router.example', ['192.168.1.1'], '192.168.1.1 is a private address', LOOPBACK],
    ['metadata.example', ['169.254.169.254'], '169.254.169.254 is a cloud metadata address', LOOPBACK],
    ['link.example', ['fe80::1'], 'fe80::1 is a link-local address', LOOPBACK],
    ['mapped.example', ['::ffff:127.0.0.1'], '::ffff:127.0.0.1 is a loopback address', STRICT],
    ['ec2.example', ['fd00:ec2::254'], 'fd00:ec2::254 is a cloud metadata address', LOOPBACK],
    ['mixed.example', ['93.184.215.14', '10.0.0.5'], '10.0.0.5 is a private address', LOOPBACK],
  ])('%s, which resolves to %j', async (name, addresses, refusal, allowance) => {
    const target = await receiver();
    const canary = allowance.allowLoopback ? ['127.0.0.1'] : [];
    const { lookup, calls } = resolver({ [name]: [...canary, ...addresses] });
    const result = await sendWebhook(hook(`https://${name}:${target.port}/hooks`), {
      ...allowance,
      lookup,
      timeoutMs: 5_000,
    });
    expect(result).toEqual(
      expect.objectContaining({
        ok: false,
        status: null,
        error: `refused: ${refusal} (${name} resolves to it)`,
      }),
    );
    expect(calls).toHaveLength(1);
    expect(target.connections).toBe(0);
  });

  it('metadata and link-local addresses even where loopback and private networks are allowed', async () => {
    const target = await receiver();
    const everything = { allowLoopback: true, allowPrivateNetworks: true };
    for (const address of ['fd00:ec2::254', '169.254.169.254', 'fe80::1']) {
      const { lookup } = resolver({ 'cloud.example': ['127.0.0.1', address] });
      expect(
        (await sendWebhook(hook(`https://cloud.example:${target.port}/hooks`), { ...everything, lookup }))
          .error,
      ).toMatch(
        new RegExp(`^refused: ${address.replace(/\./g, '\\.')} is a (cloud metadata|link-local) address`),
      );
    }
    expect(target.connections).toBe(0);
  });

  it('plain http to a host other than this machine, before any lookup', async () => {
    const { lookup, calls } = resolver({
      'hooks.example.com': ['127.0.0.1'],
      'inside.example': ['10.0.0.5'],
    });
    const everything = { allowLoopback: true, allowPrivateNetworks: true, lookup };
    for (const url of [
      'http://hooks.example.com/hooks',
      'http://inside.example/hooks',
      'http://10.0.0.5/hooks',
    ])
      expect(await sendWebhook(hook(url), everything)).toEqual(
        expect.objectContaining({
          ok: false,
          status: null,
          answer: '',
          error: 'refused: the URL must use https: plain http goes only to this machine',
        }),
      );
    expect(calls).toEqual([]);
  });

  it('what is not a URL, without throwing', async () => {
    expect(await sendWebhook(hook('not a url'), LOOPBACK)).toEqual(
      expect.objectContaining({
        ok: false,
        status: null,
        error: expect.stringMatching(
          /^refused: the URL must be a full URL, such as https:\/\/hooks.example.com\/placard, not "not a url"/,
        ),
      }),
    );
  });
});
