import {
  bearerToken,
  digestApiKey,
  generateAdminToken,
  isWellFormedAdminToken,
  isWellFormedApiKey,
} from '../domain/api-keys.js';
import { ADMIN_ROUTE_HINT } from '../domain/credentials.js';
import { DomainError, WrongCredential } from '../domain/errors.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';

/**
 * Admin tokens for the management API (stored as SHA-256 digests). A token configured in
 * PLACARD_ADMIN_TOKEN is registered at start; with none configured and none stored, one is
 * generated at first start and shown once.
 */
export class AdminTokens {
  constructor(private readonly store: Store) {}

  /** Makes sure a token exists; returns a newly generated plaintext to show once, if any. */
  async ensure(configured: string | undefined): Promise<string | undefined> {
    if (configured !== undefined) {
      if (!isWellFormedAdminToken(configured)) {
        throw new DomainError(
          'invalid',
          'PLACARD_ADMIN_TOKEN must be "pla_" followed by 40 letters and digits',
        );
      }
      const digest = digestApiKey(configured);
      if (!(await this.store.findAdminToken(digest))) {
        await this.store.createAdminToken({
          digest,
          displayPrefix: configured.slice(0, 10),
          label: 'configured',
        });
      }
      return undefined;
    }
    if ((await this.store.countAdminTokens()) > 0) return undefined;
    return this.create('first start');
  }

  /** Issues a new token; its plaintext is returned once. */
  async create(label: string): Promise<string> {
    const token = generateAdminToken();
    await this.store.createAdminToken({ digest: token.digest, displayPrefix: token.displayPrefix, label });
    return token.plaintext;
  }

  /** The actor behind an `Authorization: Bearer <admin token>` header, or a 401. */
  async authenticate(header: string | undefined): Promise<Actor> {
    const token = bearerToken(header);
    if (token !== undefined && isWellFormedApiKey(token))
      throw new WrongCredential(ADMIN_ROUTE_HINT, `unauthorized: ${ADMIN_ROUTE_HINT}`);
    if (token === undefined || !isWellFormedAdminToken(token))
      throw new DomainError('unauthorized', 'unauthorized');
    const found = await this.store.findAdminToken(digestApiKey(token));
    if (!found) throw new DomainError('unauthorized', 'unauthorized');
    return { id: `admin:${found.id}`, scope: 'operator' };
  }
}
