// Types of the part of event-load.mjs that the TypeScript tests use.

/** A campaign's stored impressions by verdict and reason, as `{ 'counted:': n, 'invalid:past cap': m }`. */
export function storedImpressions(databaseUrl: string, campaignId: number): Promise<Record<string, number>>;
