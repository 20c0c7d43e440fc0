import type { FastifyBaseLogger } from 'fastify';
import type { SignedIn, Sessions } from '../../services/sessions.js';
import type { Store } from '../../store/store.js';
import type { ServiceHealth } from '../operations.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The person whose session cookie came with the request, if it is still valid. */
    signedIn: SignedIn | null;
  }
}

/** What the dashboard's routes are given. */
export interface DashboardDeps {
  store: Store;
  sessions: Sessions;
  clock: () => number;
  /** Where people reach the dashboard (PLACARD_PUBLIC_URL): the start of one-time links. */
  publicUrl: string;
  /** Called after every successful change, so this instance serves it at once. */
  afterChange: () => void;
  /** This instance's health, with readiness as `/readyz` computes it, for the operator's page. */
  health: (log: FastifyBaseLogger) => Promise<ServiceHealth>;
}
