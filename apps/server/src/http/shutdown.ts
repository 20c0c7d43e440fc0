import type { ConnectionDrain } from './connection-drain.js';

/** Whether the instance is shutting down: new partner requests get 503 and connections close. */
export class Shutdown {
  closing = false;
  /** The listening server's connections, once `buildApp` has made it. */
  connections: ConnectionDrain | undefined;

  begin(): void {
    this.closing = true;
  }

  /** Stops listening and closes every connection within `budgetMs` (see `ConnectionDrain`). */
  async drainConnections(budgetMs: number): Promise<void> {
    await this.connections?.drain(budgetMs);
  }
}
