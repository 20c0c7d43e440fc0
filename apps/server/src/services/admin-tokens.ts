import {
  bearerToken,
  digestApiKey,
  generateAdminToken,
  isWellFormedAdminToken,
  isWellFormedApiKey,
} from '../domain/api-keys.js';
import { accountLabel, checkRole, OPERATOR_ACCOUNT, type Role } from '../domain/accounts.js';
import { ADMIN_ROUTE_HINT, lifecycleStatus } from '../domain/credentials.js';
import { alreadyDone, DomainError, invalidField, notFound, WrongCredential } from '../domain/errors.js';
import type { AdminTokenRecord, PageRequest, Store } from '../store/store.js';
import { audit, CLI_ACTOR, SYSTEM_ACTOR, type Actor } from './audit.js';
import { requireOperator, resolveAccount, storedAccount } from './scope.js';
import { trimmedText } from './text-field.js';

/** "Last used" is written at most this often per token, so reading the API is not a write each time. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Ten years: a token meant to last longer should not expire at all. */
const MAX_EXPIRY_HOURS = 24 * 3650;

/** The label and audit reason of a token registered from PLACARD_ADMIN_TOKEN. */
const CONFIGURED_LABEL = 'configured';
const CONFIGURED_REASON = 'PLACARD_ADMIN_TOKEN';

/** What `ensure` found and did at start, for the log and `placard serve` to say. */
export interface StartTokens {
  /** A token generated because none is configured and none is active: its plaintext, shown once. */
  generated?: string;
  /** The token PLACARD_ADMIN_TOKEN names. */
  configured?: AdminTokenRecord;
  /** Tokens earlier values of PLACARD_ADMIN_TOKEN registered that are still valid. */
  previous: AdminTokenRecord[];
  /** Tokens earlier values registered that this start revoked, as asked. */
  revoked: AdminTokenRecord[];
}

/** One thing to tell the operator at start about the tokens of PLACARD_ADMIN_TOKEN. */
export interface StartTokenNotice {
  level: 'info' | 'warn';
  tokenId: number;
  message: string;
}

/**
 * What the log says at start, and `placard serve` prints: which token PLACARD_ADMIN_TOKEN names,
 * and every token an earlier value registered, still valid (with how to revoke it) or revoked now.
 */
export function startTokenNotices(tokens: StartTokens): StartTokenNotice[] {
  const name = (token: AdminTokenRecord) => `admin token ${token.id} (${token.displayPrefix}…)`;
  return [
    ...(tokens.configured
      ? [
          {
            level: 'info' as const,
            tokenId: tokens.configured.id,
            message: `PLACARD_ADMIN_TOKEN is ${name(tokens.configured)}`,
          },
        ]
      : []),
    ...tokens.previous.map((token) => ({
      level: 'warn' as const,
      tokenId: token.id,
      message:
        `${name(token)}, which an earlier PLACARD_ADMIN_TOKEN registered, is still valid: ` +
        `revoke it with "placard tokens revoke ${token.id}", or start with PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS=true`,
    })),
    ...tokens.revoked.map((token) => ({
      level: 'info' as const,
      tokenId: token.id,
      message: `revoked ${name(token)}, which an earlier PLACARD_ADMIN_TOKEN registered`,
    })),
  ];
}

export interface CreatedAdminToken {
  token: AdminTokenRecord;
  /** The only time the plaintext exists outside the operator's own configuration. */
  plaintext: string;
}

/** An admin token as operators see it at `now`: never the digest or the plaintext. */
export function adminTokenView(token: AdminTokenRecord, now: number) {
  return {
    id: token.id,
    label: token.label,
    prefix: token.displayPrefix,
    account: token.scope,
    role: token.role,
    status: lifecycleStatus(token.revokedAt !== null, token.expiresAt, now),
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
    expiresAt: token.expiresAt,
    revokedAt: token.revokedAt,
  };
}

/** Tokens are the operator admins' to manage: a scoped token cannot make itself a wider one. */
function requireTokenAdmin(actor: Actor): void {
  requireOperator(actor, 'manage admin tokens');
  if (actor.role !== 'admin')
    throw new DomainError('forbidden', 'only an operator admin may manage admin tokens');
}

const isActive = (token: AdminTokenRecord, now: number) =>
  lifecycleStatus(token.revokedAt !== null, token.expiresAt, now) === 'active';

function checkExpiry(expiresInHours: unknown, now: number): number | null {
  if (expiresInHours === undefined || expiresInHours === null) return null;
  if (typeof expiresInHours !== 'number' || !(expiresInHours > 0) || expiresInHours > MAX_EXPIRY_HOURS) {
    throw invalidField(
      'expiresInHours',
      `must be a number above 0 and at most ${MAX_EXPIRY_HOURS}, or absent`,
    );
  }
  return now + Math.round(expiresInHours * 3_600_000);
}

/**
 * Admin tokens for the management API (stored as SHA-256 digests), with the keys' lifecycle:
 * labelled, optionally expiring, listed with their last use, revoked at once; creation and
 * revocation are audited. A token configured in PLACARD_ADMIN_TOKEN is registered at start; with
 * none configured and none active, one is generated at start and shown once.
 */
export class AdminTokens {
  /** When each token's last use was last written, to write it at most once a minute. */
  private readonly lastWritten = new Map<number, number>();

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Makes sure a token exists: registers the configured one, or generates one when none is
   * configured and none is active. A configured token stays valid until revoked, so changing
   * PLACARD_ADMIN_TOKEN would leave the old one working unnoticed: this also finds the tokens earlier
   * values registered that are still valid, and revokes them when `revokePrevious` says so.
   */
  async ensure(configured: string | undefined, revokePrevious = false): Promise<StartTokens> {
    const generated = await this.registerOrGenerate(configured);
    const current =
      configured === undefined ? undefined : await this.store.findAdminToken(digestApiKey(configured));
    const previous = (await this.configuredTokens()).filter((token) => token.id !== current?.id);
    if (!revokePrevious || current === undefined) {
      return {
        ...(generated && { generated }),
        ...(current && { configured: current }),
        previous,
        revoked: [],
      };
    }
    const revoked: AdminTokenRecord[] = [];
    for (const token of previous)
      revoked.push(await this.revoke(token.id, SYSTEM_ACTOR, 'replaced by PLACARD_ADMIN_TOKEN'));
    return { configured: current, previous: [], revoked };
  }

  /** The active tokens registered from PLACARD_ADMIN_TOKEN: labelled so, and audited with its name. */
  private async configuredTokens(): Promise<AdminTokenRecord[]> {
    const now = this.clock();
    const found: AdminTokenRecord[] = [];
    for (const token of await this.store.listAdminTokens()) {
      if (token.label !== CONFIGURED_LABEL || !isActive(token, now)) continue;
      const history = await this.store.listAudit({ objectType: 'admin_token', objectId: String(token.id) });
      if (history.some((entry) => entry.action === 'create' && entry.reason === CONFIGURED_REASON))
        found.push(token);
    }
    return found;
  }

  /** Registers the configured token if new; generates one if none is configured or active. */
  private async registerOrGenerate(configured: string | undefined): Promise<string | undefined> {
    const now = this.clock();
    if (configured !== undefined) {
      if (!isWellFormedAdminToken(configured)) {
        throw new DomainError(
          'invalid',
          'PLACARD_ADMIN_TOKEN must be "pla_" followed by 40 letters and digits',
        );
      }
      const known = await this.store.findAdminToken(digestApiKey(configured));
      // Registering it again would undo a revocation: a revoked token stays revoked.
      if (known && !isActive(known, now)) {
        throw new DomainError(
          'invalid',
          'PLACARD_ADMIN_TOKEN is revoked or expired: configure another token',
        );
      }
      if (!known) await this.register(configured, CONFIGURED_LABEL, null, SYSTEM_ACTOR, CONFIGURED_REASON);
      return undefined;
    }
    if ((await this.store.countAdminTokens(now)) > 0) return undefined;
    return (await this.create({ label: 'first start' }, SYSTEM_ACTOR)).plaintext;
  }

  /**
   * Issues a new token; its plaintext is returned once. Without `account` and `role` it acts as an
   * operator admin; with them, for one advertiser or partner in that role, like a person (D13).
   */
  async create(
    input: { label: unknown; expiresInHours?: unknown; account?: unknown; role?: unknown },
    actor: Actor = CLI_ACTOR,
  ): Promise<CreatedAdminToken> {
    requireTokenAdmin(actor);
    const label = trimmedText('label', input.label);
    const expiresAt = checkExpiry(input.expiresInHours, this.clock());
    const account =
      input.account === undefined ? OPERATOR_ACCOUNT : await resolveAccount(this.store, actor, input.account);
    const role = input.role === undefined ? 'admin' : checkRole(input.role);
    const generated = generateAdminToken();
    const scope = { scope: accountLabel(account), role };
    const token = await this.register(generated.plaintext, label, expiresAt, actor, null, scope);
    return { token, plaintext: generated.plaintext };
  }

  /** Stores a token's digest and audits its creation, in one transaction. */
  private register(
    plaintext: string,
    label: string,
    expiresAt: number | null,
    actor: Actor,
    reason: string | null,
    scope: { scope: string; role: string } = { scope: 'operator', role: 'admin' },
  ): Promise<AdminTokenRecord> {
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const token = await tx.createAdminToken(
        {
          digest: digestApiKey(plaintext),
          displayPrefix: plaintext.slice(0, 10),
          label,
          expiresAt,
          ...scope,
        },
        now,
      );
      const change = {
        objectType: 'admin_token',
        objectId: token.id,
        action: 'create',
        reason,
        before: null,
        after: adminTokenView(token, now),
      } as const;
      await audit(tx, actor, change, now);
      return token;
    });
  }

  list(request?: PageRequest, actor: Actor = CLI_ACTOR): Promise<AdminTokenRecord[]> {
    requireTokenAdmin(actor);
    return this.store.listAdminTokens(request);
  }

  async get(id: number, actor: Actor = CLI_ACTOR): Promise<AdminTokenRecord> {
    requireTokenAdmin(actor);
    const token = await this.store.getAdminToken(id);
    if (!token) throw notFound(`admin token ${id} not found`);
    return token;
  }

  /**
   * Revokes a token at once: the next request with it gets 401. A token may revoke itself, but the
   * last active token cannot be revoked, so the management API always has a way in; to replace a
   * leaked last token, create its successor first.
   */
  revoke(id: number, actor: Actor = CLI_ACTOR, reason: string | null = null): Promise<AdminTokenRecord> {
    requireTokenAdmin(actor);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const before = await tx.getAdminToken(id);
      if (!before) throw notFound(`admin token ${id} not found`);
      if (before.revokedAt !== null) throw alreadyDone(`admin token ${id} is already revoked`);
      if (isActive(before, now) && (await tx.countAdminTokens(now, { lock: true })) <= 1) {
        throw new DomainError(
          'conflict',
          'cannot revoke the last active admin token: create another one first',
        );
      }
      await tx.updateAdminToken(id, { revokedAt: now });
      const after = (await tx.getAdminToken(id))!;
      const change = {
        objectType: 'admin_token',
        objectId: id,
        action: 'revoke',
        reason,
        before: adminTokenView(before, now),
        after: adminTokenView(after, now),
      } as const;
      await audit(tx, actor, change, now);
      return after;
    });
  }

  /**
   * The actor behind an `Authorization: Bearer <admin token>` header, or a 401. Revocation and
   * expiry are read from the store on every request, so they take effect at once.
   */
  async authenticate(header: string | undefined): Promise<Actor> {
    const token = bearerToken(header);
    if (token !== undefined && isWellFormedApiKey(token))
      throw new WrongCredential(ADMIN_ROUTE_HINT, `unauthorized: ${ADMIN_ROUTE_HINT}`);
    if (token === undefined || !isWellFormedAdminToken(token))
      throw new DomainError('unauthorized', 'unauthorized');
    const found = await this.store.findAdminToken(digestApiKey(token));
    const now = this.clock();
    if (!found || !isActive(found, now)) throw new DomainError('unauthorized', 'unauthorized');
    await this.touch(found.id, now);
    return { id: `admin:${found.id}`, account: storedAccount(found.scope), role: found.role as Role };
  }

  private async touch(id: number, now: number): Promise<void> {
    const written = this.lastWritten.get(id);
    if (written !== undefined && now - written < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(id, now);
    await this.store.updateAdminToken(id, { lastUsedAt: now });
  }
}
