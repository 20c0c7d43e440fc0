// Types of the part of event-load.mjs that the TypeScript tests use.

/** A campaign's stored impressions by verdict and reason, as `{ 'counted:': n, 'invalid:past cap': m }`. */
export function storedImpressions(databaseUrl: string, campaignId: number): Promise<Record<string, number>>;

/** Why a server that exited before listening did, from its last output lines. */
export function failureReason(lines: string[]): string;

/** A port nobody listens on now, below the kernel's range for outgoing connections' own ports. */
export function freePort(): Promise<number>;

/**
 * The management API of a server at `url`, with `adminToken`: each call resolves with the
 * answer's `data` and throws, naming the call, on an error status.
 */
export function managementClient(
  url: string,
  adminToken: string,
): <T = Record<string, unknown> & { id: number }>(method: string, path: string, body?: unknown) => Promise<T>;
