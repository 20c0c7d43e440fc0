import { parseUserAgent, parseUserIp } from './end-user.js';
import { invalid } from './errors.js';
import { parseViewer } from './frequency-caps.js';
import { parseOccurredAt } from './event-time.js';
import { parseServeToken, TOKENS_PARAM_MESSAGE } from './serve-tokens.js';
import { parseDevice, parseLocation, type Device } from './targeting.js';

/** A validated fetch query (rule D2); placement existence is checked against the registry later. */
export interface FetchQuery {
  placement: string;
  limit: number;
  location?: string;
  device?: Device;
  /** `tokens=true`: each returned campaign carries a serve token (D15); absent otherwise. */
  tokens?: true;
  /** The partner's pseudonymous id of the end user (D20), for frequency caps; never stored. */
  viewer?: string;
}

/** A validated impression or click body (rule D5). */
export interface TrackingRequest {
  campaignId: number;
  placement: string;
  location?: string;
  device?: Device;
  /** The end user's user agent, forwarded by the partner (D15). */
  userAgent?: string;
  /** The end user's address, forwarded by the partner (D15), normalised; truncated when stored. */
  userIp?: string;
  /** The serve token fetch returned with this campaign (D15), echoed; judged, not validated, here. */
  token?: string;
  /** When the event happened, by the partner's clock (`occurredAt`, D15), in ms; bounded later. */
  occurredAt?: number;
  /** The partner's pseudonymous id of the end user (D20), for frequency caps; never stored. */
  viewer?: string;
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
const LIMIT_MESSAGE = `limit must be an integer between 1 and ${MAX_LIMIT}`;

/** A query parameter's value: a string, or an array when it was given more than once. */
export type QueryValue = string | string[] | undefined;

/** The query parameters fetch reads (D2); any other parameter is ignored. */
export type FetchParamName = 'placement' | 'limit' | 'location' | 'device' | 'tokens' | 'viewer';
export type FetchQueryParams = Readonly<Partial<Record<FetchParamName, QueryValue>>>;

/** One value of a query parameter; a parameter given twice is a 400 naming it (D2). */
function single(query: FetchQueryParams, name: FetchParamName): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw invalid(`${name} parameter must be given only once`);
  return value;
}

/** Validates the fetch query string. Unknown parameters are ignored for forward compatibility. */
export function parseFetchQuery(query: FetchQueryParams): FetchQuery {
  const placement = single(query, 'placement');
  if (placement === undefined || placement === '') throw invalid('placement parameter is required');

  const rawLimit = single(query, 'limit');
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    // Decimal digits only: rejects "", "1.5", "-1", "1e2", " 5" and "0x10".
    if (!/^\d{1,3}$/.test(rawLimit)) throw invalid(LIMIT_MESSAGE);
    limit = Number(rawLimit);
    if (limit < 1 || limit > MAX_LIMIT) throw invalid(LIMIT_MESSAGE);
  }

  const result: FetchQuery = { placement, limit };
  const location = single(query, 'location');
  if (location !== undefined) result.location = parseLocation(location);
  const device = single(query, 'device');
  if (device !== undefined) result.device = parseDevice(device);
  // Opt-in serve tokens (D15): `false` is the default spelled out; anything else is a 400.
  const tokens = single(query, 'tokens');
  if (tokens === 'true') result.tokens = true;
  else if (tokens !== undefined && tokens !== 'false') throw invalid(TOKENS_PARAM_MESSAGE);
  const viewer = single(query, 'viewer');
  if (viewer !== undefined) result.viewer = parseViewer(viewer);
  return result;
}

/** Validates a tracking body that has already been parsed as JSON. */
export function parseTrackingBody(body: unknown): TrackingRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('request body must be a JSON object');
  }
  const fields = body as Record<string, unknown>;

  const campaignId = fields['campaignId'];
  if (campaignId === undefined || campaignId === null) throw invalid('campaignId is required');
  if (typeof campaignId !== 'number' || !Number.isSafeInteger(campaignId) || campaignId <= 0) {
    throw invalid('campaignId must be a positive integer');
  }

  const placement = fields['placement'];
  if (placement === undefined || placement === null) throw invalid('placement is required');
  if (typeof placement !== 'string' || placement === '') throw invalid('placement is required');

  const result: TrackingRequest = { campaignId, placement };
  if (fields['location'] !== undefined) result.location = parseLocation(fields['location']);
  if (fields['device'] !== undefined) result.device = parseDevice(fields['device']);
  if (fields['userAgent'] !== undefined) result.userAgent = parseUserAgent(fields['userAgent']);
  if (fields['userIp'] !== undefined) result.userIp = parseUserIp(fields['userIp']);
  if (fields['token'] !== undefined) result.token = parseServeToken(fields['token']);
  if (fields['occurredAt'] !== undefined) result.occurredAt = parseOccurredAt(fields['occurredAt']);
  if (fields['viewer'] !== undefined) result.viewer = parseViewer(fields['viewer']);
  return result;
}
