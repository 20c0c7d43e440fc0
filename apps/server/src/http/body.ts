import type { IncomingMessage } from 'node:http';
import secureJson from 'secure-json-parse';
import { invalid } from '../domain/errors.js';
import { HttpError } from './errors.js';

/**
 * Reads a JSON request body (D5): 415 unless the media type is application/json (parameters such as
 * charset are fine), 413 past `limit` bytes (checked against Content-Length before reading, and
 * while reading for chunked bodies), 400 when it does not parse or tries prototype poisoning.
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
    // Refuses `__proto__` and `constructor.prototype` keys (prototype poisoning), as Fastify does.
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }) as unknown;
  } catch {
    throw invalid('request body must be a JSON object');
  }
}
