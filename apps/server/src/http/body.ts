import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { invalid } from '../domain/errors.js';
import { HttpError } from './errors.js';

/**
 * The deepest a JSON body may nest (objects and arrays). The deepest body any route takes is a few
 * levels; checks that walk a body (NUL characters, unknown fields) recurse, and a small body nested
 * thousands deep would overflow their stack.
 */
export const MAX_JSON_DEPTH = 32;

export const TOO_DEEP = `request body must not nest deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * Whether the JSON text `text` opens more than `max` objects or arrays inside each other. One pass
 * over the characters, skipping strings, without building anything: cheap enough for every
 * tracking body. (No JSON library offers a depth bound; V8's own parser takes any depth.)
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Parses a JSON request body, the one way every API does: refuses `__proto__` and
 * `constructor.prototype` keys (prototype poisoning, as Fastify's own parser does) with a
 * `SyntaxError`, and a body nested deeper than `MAX_JSON_DEPTH` with a 400 that names the limit.
 */
export function parseJson(text: string): unknown {
  const value = secureJson.parse(text, undefined, {
    protoAction: 'error',
    constructorAction: 'error',
  }) as unknown;
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw invalid(TOO_DEEP);
  return value;
}

/** Fastify's JSON parser, for the management API and the dashboard: `parseJson` over the text. */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, parseJson(text as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/**
 * Reads a JSON request body (D5): 415 unless the media type is application/json (parameters such as
 * charset are fine), 413 past `limit` bytes (checked against Content-Length before reading, and
 * while reading for chunked bodies), 400 when it does not parse, tries prototype poisoning or nests too deep.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const mediaType = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') throw new HttpError(415, 'Content-Type must be application/json');
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    throw new HttpError(413, 'request body too large', { connection: 'close' });
  }

  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Stop buffering but keep draining, so the 413 can still be written on this connection.
      request.off('data', onData);
      request.resume();
      reject(new HttpError(413, 'request body too large', { connection: 'close' }));
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks, Math.min(size, limit)).toString('utf8')));
    request.once('error', reject);
  });
  try {
    return parseJson(text);
  } catch {
    // The contract has one message for a body it will not read, too deep included (D5).
    throw invalid('request body must be a JSON object');
  }
}
