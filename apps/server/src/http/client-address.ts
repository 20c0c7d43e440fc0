import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/** The address of the client behind a request, as the per-client limits count it. */
export type ClientAddress = (request: IncomingMessage) => string;

/** The TCP peer: the client itself when nothing stands between it and Placard. */
export const peerAddress: ClientAddress = (request) => request.socket.remoteAddress ?? 'unknown';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses one entry of the trusted proxies' list: an address or a CIDR range; undefined if neither. */
export function parseProxyRange(entry: string): Range | undefined {
  const text = entry.trim();
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.parse(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return undefined;
  }
}

/**
 * Where a request came from, behind the reverse proxies the operator trusts
 * (`PLACARD_TRUSTED_PROXIES`). A trusted proxy appends the address it received the request from to
 * `X-Forwarded-For` (HAProxy's `option forwardfor` adds its own header line; Node joins the lines
 * with commas). The client is the nearest address in that chain that is not a trusted proxy: read
 * from the right, every hop up to there was added by a proxy the operator named, while what lies
 * further left was written by the client and could be anything. A request from a peer that is not a
 * trusted proxy is its peer, whatever it says in `X-Forwarded-For`.
 *
 * Written here rather than taken from `proxy-addr` (what Fastify's `trustProxy` uses) because the
 * partner API runs outside Fastify and both must count a client the same way; `ipaddr.js`, which
 * `proxy-addr` builds on too, does the address parsing.
 */
export function clientAddressBehind(
  trustedProxies: readonly string[],
  onUntrustedForward?: (peer: string) => void,
): ClientAddress {
  const ranges = trustedProxies.map((entry) => {
    const range = parseProxyRange(entry);
    if (!range) throw new Error(`not an address or a CIDR range: ${entry}`);
    return range;
  });
  const trusted = (address: string): boolean => {
    if (!ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return ranges.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
  };
  let warned = false;
  return (request) => {
    const peer = peerAddress(request);
    const forwarded = request.headers['x-forwarded-for'];
    if (forwarded === undefined) return peer;
    if (!trusted(peer)) {
      if (!warned && onUntrustedForward) {
        warned = true;
        onUntrustedForward(peer);
      }
      return peer;
    }
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = (hops[i] as string).trim();
      // A hop that is not an address was not written by a proxy we trust: stop at the last one that was.
      if (!ipaddr.isValid(hop)) return client;
      client = hop;
      if (!trusted(hop)) return client;
    }
    return client;
  };
}
