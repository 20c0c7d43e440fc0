/**
 * A new Idempotency-Key in time order: a UUID version 7 (RFC 9562), the current Unix time in
 * milliseconds in its first 48 bits and 74 random bits after it. The server keeps each key until
 * it expires, in an index ordered by key: keys that follow the clock land side by side there, a
 * batch of them on a page or two, where random keys (version 4) land each on a page of its own and
 * cost Placard's SQLite write path about three times the bytes per event (docs/benchmarks.md).
 *
 * Written here rather than taken from the `uuid` package (which has `v7`): the SDK has no runtime
 * dependency, and this is the whole of what it would use.
 */
export function timeOrderedKey(now: number = Date.now()): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let time = Math.floor(now);
  for (let index = 5; index >= 0; index--) {
    bytes[index] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f); // version 7
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f); // variant 10
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
