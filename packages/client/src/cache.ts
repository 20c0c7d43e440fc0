/**
 * Fetched campaigns by argument set, each kept for the `max-age` the server sent with it
 * (`Cache-Control: private, max-age=N`). Bounded: past `maxEntries` the oldest entry goes.
 */
export class ResponseCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly clock: () => number,
    private readonly maxEntries = 1_000,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.clock() >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T, maxAgeMs: number): void {
    if (maxAgeMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expiresAt: this.clock() + maxAgeMs });
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The `max-age` of a `Cache-Control` header in milliseconds; 0 when absent or `no-store`. */
export function maxAgeMs(cacheControl: string | null): number {
  if (cacheControl === null || /(^|,)\s*no-(store|cache)\b/i.test(cacheControl)) return 0;
  const match = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl);
  return match ? Number(match[1]) * 1000 : 0;
}
