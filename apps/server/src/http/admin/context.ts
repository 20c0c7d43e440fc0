import type { FastifyRequest } from 'fastify';
import type { AdminTokens } from '../../services/admin-tokens.js';
import type { Actor } from '../../services/audit.js';
import type { ManagementServices } from '../../services/management-services.js';
import type { AuthFailureLimiter } from '../auth-failures.js';
import type { RefusalLog } from '../refusal-log.js';

/** What the management routes are given (kept apart from plugin.ts, which imports the routes). */
declare module 'fastify' {
  interface FastifyRequest {
    /** The operator behind the admin token; set by the admin auth hook. */
    adminActor: Actor | null;
  }
}

export interface AdminDeps {
  /** The services the routes call, as the caller: the routes' only way to the store. */
  services: ManagementServices;
  tokens: AdminTokens;
  clock: () => number;
  /** Failed authentications, shared with the partner API (D6). */
  authFailures?: AuthFailureLimiter;
  /** Counts and samples the log of uploads their clients abandon. */
  refusals?: RefusalLog;
}

export interface AdminContext extends AdminDeps {
  actor(request: FastifyRequest): Actor;
}

/** A route file's service, as each request's caller: `callerService(context, (s, actor) => s.partners(actor))`. */
export function callerService<Service>(
  context: AdminContext,
  open: (services: ManagementServices, actor: Actor) => Service,
): (request: FastifyRequest) => Service {
  return (request) => open(context.services, context.actor(request));
}
