import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';
import { invalid } from './errors.js';

/** The longest `userAgent` accepted (browsers' are a few hundred characters). */
export const MAX_USER_AGENT_LENGTH = 1024;
export const USER_AGENT_MESSAGE = 'userAgent must be a string of 1 to 1024 characters';
export const USER_IP_MESSAGE = 'userIp must be an IPv4 or IPv6 address';

/** Validates the optional `userAgent` body field (D15). */
export function parseUserAgent(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_USER_AGENT_LENGTH) {
    throw invalid(USER_AGENT_MESSAGE);
  }
  return value;
}

/**
 * Validates the optional `userIp` body field (D15) and returns it in one spelling: IPv4 dotted
 * (also for an IPv4-mapped IPv6 address), IPv6 in full lower-case groups.
 */
export function parseUserIp(value: unknown): string {
  // Only the dotted quad is IPv4 here ("1" and "0x7f.1" are valid to ipaddr.js, not to us).
  const valid =
    typeof value === 'string' &&
    (value.includes(':') ? ipaddr.IPv6.isValid(value) : ipaddr.IPv4.isValidFourPartDecimal(value));
  if (!valid) throw invalid(USER_IP_MESSAGE);
  const address = ipaddr.process(value);
  return address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toNormalizedString();
}

/**
 * The address as stored (D15): an IPv4 address's /24 (`203.0.113.0`), an IPv6 address's /48
 * (`2001:db8:1::`), so a stored event never names one end user's address.
 */
export function truncateAddress(address: string): string {
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') {
    const octets = (parsed as ipaddr.IPv4).octets;
    return `${octets[0]}.${octets[1]}.${octets[2]}.0`;
  }
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 3);
  return new ipaddr.IPv6([...parts, 0, 0, 0, 0, 0]).toString();
}

/** Whether a user agent is a known bot, crawler or automated client (the `isbot` package's list). */
export const isKnownBot = (userAgent: string): boolean => isbot(userAgent);

/**
 * Whose address this is, for limits per end user or client: an IPv4 address itself, and for IPv6
 * its /64, the block one subscriber or one machine gets, so that walking the 2^64 addresses of a
 * block counts as one. An IPv4 address in IPv6 form (`::ffff:192.0.2.1`) is IPv4.
 */
export function addressSource(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const groups = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${groups.join(':')}::/64`;
}
