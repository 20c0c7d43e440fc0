import type { FastifyBaseLogger } from 'fastify';
import type { Pace } from '../../domain/pacing.js';
import type { SignedIn, Sessions } from '../../services/sessions.js';
import type { ManagementServices } from '../../services/management-services.js';
import type { RefusalLog } from '../refusal-log.js';
import type { ClientAddress } from '../client-address.js';
import type { ServiceHealth } from '../operations.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The person whose session cookie came with the request, if it is still valid. */
    signedIn: SignedIn | null;
  }
}

/** What the dashboard's routes are given. */
export interface DashboardDeps {
  /** The services the pages call, as the signed-in person: the pages' only way to the store. */
  services: ManagementServices;
  sessions: Sessions;
  clock: () => number;
  /** Who is signing in, behind the trusted proxies: what sign-in attempts are counted against. */
  clientAddress: ClientAddress;
  /** Where people reach the dashboard (PLACARD_PUBLIC_URL): the start of one-time links. */
  publicUrl: string;
  /** Each campaign's pace as this instance's pacing job last decided it (D16). */
  paceOf: (id: number) => Pace;
  /** This instance's health, with readiness as `/readyz` computes it, for the operator's page. */
  health: (log: FastifyBaseLogger) => Promise<ServiceHealth>;
  /** Counts and samples the log of refused CSRF tokens and abandoned uploads. */
  refusals?: RefusalLog;
}
