// The HTTP client webhooks are delivered with (D19), written over node:http(s) rather than taken
// from a library because its one job is a guard no client offers whole: the name is resolved by the
// connection's own `lookup`, and every address it resolves to is checked there, so the address
// connected to is one that was checked (no second lookup that a rebinding DNS server could answer
// differently). It follows no redirect, and bounds both the time an attempt takes and what it reads.
import dns from 'node:dns';
import http, { type ClientRequest } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { addressRefusal, webhookUrlProblem, type AddressAllowance } from '../domain/webhook-addresses.js';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendOptions {
  /** Loopback addresses allowed (`PLACARD_WEBHOOKS_ALLOW_LOOPBACK`), and plain http to this machine. */
  allowLoopback: boolean;
  /** Private networks allowed (`PLACARD_WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivateNetworks: boolean;
  /** The whole attempt, from resolving the name to the last byte read (default 10 s). */
  timeoutMs?: number;
  /** How much of the answer's body is read and kept (default 1 KiB); the rest is not read. */
  maxAnswerBytes?: number;
  /** Resolves host names (default node:dns's `lookup`); tests give their own. */
  lookup?: LookupFunction;
}

export interface SendResult {
  /** A 2xx answer arrived. */
  ok: boolean;
  /** The answer's status; null when none arrived. */
  status: number | null;
  durationMs: number;
  /** The first `maxAnswerBytes` of the answer's body, as UTF-8 text. */
  answer: string;
  /** What went wrong (refused, timed out, reset…); null when an answer arrived, whatever its status. */
  error: string | null;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_ANSWER_BYTES = 1_024;
const USER_AGENT = 'Placard-Webhooks/1';

/** The callback of a `lookup` asked for every address (`all: true`), which `LookupFunction` types loosely. */
type AllAddressesCallback = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;

/**
 * A `lookup` for the connection: resolves `hostname` with `resolve`, asking for every address, and
 * fails when any of them is refused, so a name cannot hide a private address behind a public one
 * (the connection may try each). Node asks with `all: true` when it tries the addresses in turn
 * (`autoSelectFamily`, the default since Node 20) and for one address otherwise; both are answered.
 */
function guardedLookup(resolve: LookupFunction, allow: AddressAllowance): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, resolved, family) => {
      if (error) return callback(error, '', 0);
      const addresses =
        typeof resolved === 'string' ? [{ address: resolved, family: family ?? 4 }] : resolved;
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
      for (const { address } of addresses) {
        const refusal = addressRefusal(address, allow);
        if (refusal !== null)
          return callback(new Error(`refused: ${refusal} (${hostname} resolves to it)`), '', 0);
      }
      if (options.all) return (callback as unknown as AllAddressesCallback)(null, addresses);
      const [first] = addresses as [dns.LookupAddress];
      return callback(null, first.address, first.family);
    });
  };
}

/** A Node error in a few words: its message, with its code when the message does not say it. */
function inWords(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/**
 * POSTs one webhook. Never throws: every failure, a refused address included, is a result with
 * `ok: false` and `error` saying what happened. A redirect is not followed (a 3xx is a failure,
 * like any status but 2xx). One timer bounds the whole attempt; the answer's body is read up to
 * `maxAnswerBytes` and the connection then closed, so a receiver cannot hold a delivery up by
 * answering slowly or at length.
 */
export async function sendWebhook(request: WebhookRequest, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const allow = { loopback: options.allowLoopback, privateNetworks: options.allowPrivateNetworks };
  const result = (error: string | null, status: number | null = null, answer = ''): SendResult => ({
    ok: error === null && status !== null && status >= 200 && status < 300,
    status,
    durationMs: performance.now() - started,
    answer,
    error,
  });
  const problem = webhookUrlProblem(request.url, allow);
  // A literal address is checked here, with the URL: Node connects to it without a `lookup`.
  if (problem !== null) return result(`refused: the URL ${problem}`);
  const url = new URL(request.url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_ANSWER_BYTES;
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<SendResult>((resolve) => {
    let outgoing: ClientRequest | undefined;
    let settled = false;
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let length = 0;
    /** The answer's body so far, cut to `maxAnswerBytes` at a character's end. */
    const answer = () =>
      new StringDecoder('utf8').write(Buffer.concat(chunks, length).subarray(0, maxAnswerBytes));
    const settle = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Closes the connection: no pooling (`agent: false`), and the rest of an answer is not read.
      outgoing?.destroy();
      resolve(result(error, status, answer()));
    };
    const timer = setTimeout(() => settle(`timed out after ${timeoutMs} ms`), timeoutMs);
    try {
      outgoing = client.request(
        url,
        {
          method: 'POST',
          agent: false,
          lookup: guardedLookup(options.lookup ?? dns.lookup, allow),
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            ...request.headers,
            'content-length': String(Buffer.byteLength(request.body)),
          },
        },
        (incoming) => {
          status = incoming.statusCode ?? null;
          incoming.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            length += chunk.length;
            if (length >= maxAnswerBytes) settle(null);
          });
          incoming.on('end', () => settle(null));
          // Cut off after the status: the receiver answered, and said what it said.
          incoming.on('error', () => settle(null));
          incoming.on('close', () => settle(null));
        },
      );
      outgoing.on('error', (error) => settle(inWords(error)));
      outgoing.end(request.body);
    } catch (error) {
      // A header Node will not send (a line break in a value) throws from `request`.
      settle(inWords(error));
    }
  });
}
