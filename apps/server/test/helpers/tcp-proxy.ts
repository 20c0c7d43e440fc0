import net from 'node:net';

/** A TCP proxy on loopback in front of a database, to break the connections between them at will. */
export interface TcpProxy {
  /** The target's URL with the proxy's address in place of the target's. */
  url: string;
  /** Sends a RST on every connection it carries; answers how many there were. */
  reset(): number;
  /** Stops carrying bytes either way, and holds new connections the same: a server that stalled. */
  stall(): void;
  /** Carries bytes again, as when a stalled server comes back. */
  resume(): void;
  /**
   * New connections carry bytes again while the stalled ones stay silent for good, as after a
   * failover behind the same address or a firewall that dropped its state: only a client that
   * gives up on a silent connection and opens a new one recovers.
   */
  healNewConnections(): void;
  close(): void;
}

export async function tcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
    // After pipe(), which sets both flowing.
    if (stalled) for (const socket of [client, upstream]) socket.pause();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return {
    url: url.toString(),
    reset() {
      const count = sockets.size;
      for (const socket of sockets) socket.resetAndDestroy();
      return count;
    },
    stall() {
      stalled = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      stalled = false;
      for (const socket of sockets) socket.resume();
    },
    healNewConnections() {
      stalled = false;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      proxy.close();
    },
  };
}
