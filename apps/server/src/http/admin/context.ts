import type { FastifyRequest } from 'fastify';
import type { AdminTokens } from '../../services/admin-tokens.js';
import type { Actor } from '../../services/audit.js';
import type { CampaignIndex } from '../../services/campaign-index.js';
import type { Store } from '../../store/store.js';
import type { AuthFailureLimiter } from '../auth-failures.js';

/** What the management routes are given (kept apart from plugin.ts, which imports the routes). */
declare module 'fastify' {
  interface FastifyRequest {
    /** The operator behind the admin token; set by the admin auth hook. */
    adminActor: Actor | null;
  }
}

export interface AdminDeps {
  store: Store;
  tokens: AdminTokens;
  clock: () => number;
  /** The serving index of this instance, as fetches see it now (the explainer draws against it). */
  index: () => CampaignIndex;
  /** Called after every successful change, so this instance serves it at once. */
  afterChange: () => void;
  /** Failed authentications, shared with the partner API (D6). */
  authFailures?: AuthFailureLimiter;
  /** Where people reach the dashboard: the start of one-time links. */
  publicUrl: string;
}

export interface AdminContext extends AdminDeps {
  actor(request: FastifyRequest): Actor;
}
