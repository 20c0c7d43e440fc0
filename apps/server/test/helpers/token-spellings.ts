import { MAX_SERVE_TOKEN_LENGTH } from '../../src/domain/serve-tokens.js';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Other spellings of a base64url serve token that decode to the same bytes. Node's base64 decoding
 * is lenient: it takes either alphabet, padding or none, any value in the unused low bits of the
 * last character, and skips characters outside the alphabet. So a token's text does not name it;
 * only its bytes (its nonce) can. Only spellings a tracking body accepts are returned.
 */
export function otherSpellings(token: string): string[] {
  const bytes = Buffer.from(token, 'base64url');
  const head = token.slice(0, -1);
  const candidates = [
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    `${token}=`,
    `${token}==`,
    ...[...BASE64URL].map((last) => head + last),
    ` ${token}`,
    `${token}\n`,
    `${token.slice(0, 20)}.${token.slice(20)}`,
  ];
  return [...new Set(candidates)].filter(
    (spelling) =>
      spelling !== token &&
      spelling.length <= MAX_SERVE_TOKEN_LENGTH &&
      Buffer.from(spelling, 'base64url').equals(bytes),
  );
}
