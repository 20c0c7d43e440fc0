import type { IncomingMessage } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { clientAddressBehind, parseProxyRange } from './client-address.js';

/** A request as the socket and headers show it. */
function from(peer: string, forwardedFor?: string): IncomingMessage {
  return {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

describe('clientAddressBehind', () => {
  const behindProxy = clientAddressBehind(['10.0.0.5', '10.1.0.0/16']);

  it('is the peer when nothing is trusted, whatever X-Forwarded-For says, and says so once', () => {
    const ignored = vi.fn();
    const direct = clientAddressBehind([], ignored);
    expect(direct(from('198.51.100.7', '203.0.113.1'))).toBe('198.51.100.7');
    expect(direct(from('198.51.100.8', '203.0.113.2'))).toBe('198.51.100.8');
    expect(ignored.mock.calls).toEqual([['198.51.100.7']]);
    expect(behindProxy(from('198.51.100.7', '203.0.113.1'))).toBe('198.51.100.7');
  });

  it('is the address a trusted proxy names, and the nearest untrusted one of a chain', () => {
    expect(behindProxy(from('10.0.0.5', '203.0.113.1'))).toBe('203.0.113.1');
    expect(behindProxy(from('::ffff:10.0.0.5', '203.0.113.1'))).toBe('203.0.113.1');
    // The client wrote the left part itself: only what the proxies appended counts.
    expect(behindProxy(from('10.0.0.5', '1.2.3.4, 203.0.113.1, 10.1.2.3'))).toBe('203.0.113.1');
    // Two header lines (HAProxy adds its own) arrive joined.
    expect(behindProxy(from('10.0.0.5', '1.2.3.4, 2001:db8::1'))).toBe('2001:db8::1');
  });

  it('stops at a hop that is not an address, and is the peer without the header', () => {
    expect(behindProxy(from('10.0.0.5', 'not-an-address, 10.1.0.9'))).toBe('10.1.0.9');
    expect(behindProxy(from('10.0.0.5', 'garbage'))).toBe('10.0.0.5');
    expect(behindProxy(from('10.0.0.5'))).toBe('10.0.0.5');
    expect(behindProxy(from('10.0.0.5', '10.1.0.1, 10.1.0.2'))).toBe('10.1.0.1');
  });
});

describe('parseProxyRange', () => {
  it('takes addresses and CIDR ranges of both families, nothing else', () => {
    expect(parseProxyRange('10.0.0.5')?.[1]).toBe(32);
    expect(parseProxyRange(' 10.1.0.0/16 ')?.[1]).toBe(16);
    expect(parseProxyRange('2001:db8::/32')?.[1]).toBe(32);
    expect(parseProxyRange('proxy.example')).toBeUndefined();
    expect(parseProxyRange('10.0.0.0/33')).toBeUndefined();
  });
});
