import type http from 'node:http';
import net from 'node:net';

/** How often draining looks at the open connections. */
const TICK_MS = 50;

interface Seen {
  bytesRead: number;
  idle: boolean;
}

/** True while a request on this connection is being answered (Node's own bookkeeping). */
const answering = (socket: net.Socket): boolean =>
  Boolean((socket as net.Socket & { _httpMessage?: unknown })._httpMessage);

/**
 * Closes a server's connections at shutdown without resetting a client that was answered.
 *
 * Node's own `server.close()` stops listening and at once destroys every connection that is not
 * answering a request, including keep-alive connections whose client is sending its next request
 * at that moment, and ones accepted a moment ago whose request has not arrived yet: those clients
 * see a reset, and cannot know whether their request was received. Here, while shutting down:
 * every answer carries `Connection: close` (the routes add it), so a connection that is used ends
 * after its answer; a connection is closed by the server only once it has stayed silent for a
 * whole tick; a request still arriving (a straggler) gets the rest of the budget; then whatever is
 * left is destroyed so that shutdown always finishes.
 */
export class ConnectionDrain {
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly server: http.Server) {
    server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Stops listening, then closes the connections as above within `budgetMs`; resolves when none is left. */
  async drain(budgetMs: number): Promise<void> {
    // net.Server's close, not http.Server's: stop listening, leaving open connections to us.
    await new Promise<void>((resolve) => {
      net.Server.prototype.close.call(this.server, () => resolve());
      if (this.sockets.size === 0) resolve();
      const deadline = setTimeout(() => {
        this.server.closeAllConnections();
        for (const socket of this.sockets) socket.destroy();
        resolve();
      }, budgetMs);
      const seen = new Map<net.Socket, Seen>();
      const tick = setInterval(() => {
        for (const socket of this.sockets) {
          const now = { bytesRead: socket.bytesRead, idle: !answering(socket) };
          const before = seen.get(socket);
          seen.set(socket, now);
          if (now.idle && before?.idle && before.bytesRead === now.bytesRead) socket.end();
        }
        if (this.sockets.size === 0) resolve();
      }, TICK_MS);
      this.server.once('close', () => {
        clearTimeout(deadline);
        clearInterval(tick);
      });
    });
  }
}
