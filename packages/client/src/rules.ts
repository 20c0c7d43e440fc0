import { COUNTRY_CODES, DEFAULT_LIMIT, DEVICES, MAX_LIMIT, MESSAGES, type Device } from './generated.js';
import { ValidationError } from './errors.js';

export interface FetchArguments {
  placement: string;
  /** 1 to 100; 10 when absent. */
  limit?: number;
  /** ISO 3166-1 alpha-2 country code of the user. */
  location?: string;
  device?: Device;
  /**
   * Your own pseudonymous id for the user the page is for (D20), 1 to 128 characters, never an
   * e-mail address: campaigns' frequency caps count it. Such a fetch is that user's: never cached.
   */
  viewer?: string;
}

export interface TrackingContext {
  location?: string;
  device?: Device;
  /** The end user's `User-Agent`, forwarded from the request that displayed or clicked (D15). */
  userAgent?: string;
  /** The end user's IP address, forwarded likewise; Placard stores it truncated. */
  userIp?: string;
  /**
   * The campaign's serve token, from a client created with `tokens: true` (D15). `display(...)`
   * sends it for you; pass it only when calling `trackImpression`/`trackClick` yourself.
   */
  token?: string;
  /**
   * When the end user saw or clicked, if the event is sent late (D15): a queue sending its backlog
   * after an outage. A `Date`, or an RFC 3339 UTC string; the server bounds it (15 minutes by default).
   */
  occurredAt?: Date | string;
  /** The same `viewer` as the fetch (D20), so the campaign's frequency caps count this display. */
  viewer?: string;
}

const COUNTRIES: ReadonlySet<string> = new Set(COUNTRY_CODES);

/** The server's normalised `location` (upper case), or a ValidationError with its message. */
export function checkLocation(location: unknown): string {
  const code = typeof location === 'string' ? location.toUpperCase() : '';
  if (!COUNTRIES.has(code)) throw new ValidationError(MESSAGES.location, 400);
  return code;
}

/** The server's normalised `device` (lower case), or a ValidationError with its message. */
export function checkDevice(device: unknown): Device {
  const lower = typeof device === 'string' ? device.toLowerCase() : '';
  const known = DEVICES.find((candidate) => candidate === lower);
  if (known === undefined) throw new ValidationError(MESSAGES.device, 400);
  return known;
}

/**
 * Validates fetch arguments with the server's rules (D2), before any request, and returns them
 * normalised (so equal argument sets share one cache entry). Whether the placement exists only the
 * server knows.
 */
export function checkFetchArguments(
  args: FetchArguments,
): Required<Pick<FetchArguments, 'placement' | 'limit'>> & FetchArguments {
  if (typeof args.placement !== 'string' || args.placement === '') {
    throw new ValidationError(MESSAGES.placement, 400);
  }
  const limit = args.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new ValidationError(MESSAGES.limit, 400);
  return {
    placement: args.placement,
    limit,
    ...(args.location !== undefined && { location: checkLocation(args.location) }),
    ...(args.device !== undefined && { device: checkDevice(args.device) }),
    // Checked by the server (its 400 becomes a ValidationError), as the end user's signals are.
    ...(args.viewer !== undefined && { viewer: args.viewer }),
  };
}

/** Validates a tracking event's fields with the server's rules (D5). */
export function checkTracking(campaignId: unknown, placement: unknown, context: TrackingContext = {}) {
  if (typeof campaignId !== 'number' || !Number.isSafeInteger(campaignId) || campaignId <= 0) {
    throw new ValidationError(MESSAGES.campaignId, 400);
  }
  if (typeof placement !== 'string' || placement === '')
    throw new ValidationError('placement is required', 400);
  return {
    campaignId,
    placement,
    ...(context.location !== undefined && { location: checkLocation(context.location) }),
    ...(context.device !== undefined && { device: checkDevice(context.device) }),
    // Checked by the server, whose 400 becomes a ValidationError: its rules are its own.
    ...(context.userAgent !== undefined && { userAgent: context.userAgent }),
    ...(context.userIp !== undefined && { userIp: context.userIp }),
    ...(context.token !== undefined && { token: context.token }),
    ...(context.viewer !== undefined && { viewer: context.viewer }),
    ...(context.occurredAt !== undefined && {
      occurredAt: context.occurredAt instanceof Date ? context.occurredAt.toISOString() : context.occurredAt,
    }),
  };
}
