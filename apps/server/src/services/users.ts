import { generateBrowserSecret } from '../domain/api-keys.js';
import { accountLabel, checkEmail, checkRole, mayManageUsers, type Account } from '../domain/accounts.js';
import { alreadyExists, DomainError, notFound } from '../domain/errors.js';
import type {
  LinkPurpose,
  NumberedPage,
  NumberedPageRequest,
  PageRequest,
  Store,
  UserRecord,
} from '../store/store.js';
import { audit, CLI_ACTOR, type Actor } from './audit.js';
import { resolveAccount, seesAccount } from './scope.js';

/** How long an invitation or a password-reset link works (D13). */
export const LINK_LIFETIME_MS = 72 * 3_600_000;

/** A one-time link as given out once: its full address and when it stops working. */
export interface OneTimeLink {
  url: string;
  expiresAt: number;
}

/** A user as callers see them: never the password hash. */
export function userView(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    account: accountLabel(user.account),
    role: user.role,
    status: user.disabledAt !== null ? 'disabled' : user.hasPassword ? 'active' : 'invited',
    createdAt: user.createdAt,
    passwordChangedAt: user.passwordChangedAt,
    disabledAt: user.disabledAt,
  };
}

/**
 * People and their accounts (D13): creating users with a one-time invitation link, password-reset
 * links, disabling, listing. Every call is scoped to the actor: an account's admin manages that
 * account's users only, and a user of another account is answered as missing. Users are the
 * admins' alone, to read as to change: a manager or a reporter (a person or an admin token with
 * that role) is refused (403) on every call, lists and single users included.
 */
export class UserService {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor = CLI_ACTOR,
    private readonly publicUrl = 'http://127.0.0.1:8080',
    private readonly clock: () => number = Date.now,
  ) {}

  /** Creates a user without a password and returns the invitation link that lets them set one. */
  async create(input: { email: unknown; account: unknown; role: unknown }): Promise<{
    user: UserRecord;
    link: OneTimeLink;
  }> {
    const email = checkEmail(input.email);
    const role = checkRole(input.role);
    const account = await resolveAccount(this.store, this.actor, input.account);
    this.requireUserAdmin(account);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      if (await tx.findUserForSignIn(email)) {
        throw alreadyExists(`a user with e-mail ${email} already exists`);
      }
      const user = await tx.createUser({ email, account, role }, now);
      const link = await this.issueLink(tx, user, 'invitation', now);
      await audit(
        tx,
        this.actor,
        { objectType: 'user', objectId: user.id, action: 'create', before: null, after: userView(user) },
        now,
      );
      return { user, link };
    });
  }

  /** Users the actor may see: one account's (its own unless it is the operator's), or all for the operator. */
  async list(account?: unknown, request?: PageRequest): Promise<UserRecord[]> {
    this.requireAdminRole();
    const wanted = account === undefined ? undefined : await resolveAccount(this.store, this.actor, account);
    if (this.actor.account.kind !== 'operator') {
      if (wanted && accountLabel(wanted) !== accountLabel(this.actor.account)) return [];
      return this.store.listUsers(this.actor.account, request);
    }
    return this.store.listUsers(wanted, request);
  }

  /** One numbered page of the users the actor may see, newest first, with their count. */
  page(request: NumberedPageRequest): Promise<NumberedPage<UserRecord>> {
    this.requireAdminRole();
    const account = this.actor.account;
    return this.store.userPage(account.kind === 'operator' ? undefined : account, request);
  }

  /** A user by id or e-mail address; one of another account is answered as missing. */
  async get(ref: string | number): Promise<UserRecord> {
    const text = String(ref).trim();
    const user = /^\d+$/.test(text)
      ? await this.store.getUser(Number(text))
      : (await this.store.findUserForSignIn(text.toLowerCase()))?.user;
    if (!user || !this.sees(user.account)) throw notFound(`user ${JSON.stringify(text)} not found`);
    this.requireAdminRole();
    return user;
  }

  /** A new invitation for a user who has not set a password yet; earlier links stop working. */
  invite(ref: string | number): Promise<OneTimeLink> {
    return this.newLink(ref, 'invitation');
  }

  /** A password-reset link; using it ends the user's sessions. Earlier links stop working. */
  reset(ref: string | number): Promise<OneTimeLink> {
    return this.newLink(ref, 'reset');
  }

  /** Disables the user: they cannot sign in, and their sessions end now. */
  async disable(ref: string | number): Promise<UserRecord> {
    const before = await this.get(ref);
    this.requireUserAdmin(before.account);
    if (before.id === this.userId()) throw invalid409('you cannot disable yourself');
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      await tx.updateUser(before.id, { disabledAt: before.disabledAt ?? now }, now);
      await tx.endSessions({ userId: before.id }, now);
      const after = (await tx.getUser(before.id))!;
      await audit(
        tx,
        this.actor,
        {
          objectType: 'user',
          objectId: before.id,
          action: 'disable',
          before: userView(before),
          after: userView(after),
        },
        now,
      );
      return after;
    });
  }

  private async newLink(ref: string | number, purpose: LinkPurpose): Promise<OneTimeLink> {
    const user = await this.get(ref);
    this.requireUserAdmin(user.account);
    if (user.disabledAt !== null) throw invalid409(`user ${user.email} is disabled`);
    if (purpose === 'invitation' && user.hasPassword) {
      throw invalid409(`user ${user.email} has already set a password; give them a password reset instead`);
    }
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const link = await this.issueLink(tx, user, purpose, now);
      await audit(
        tx,
        this.actor,
        {
          objectType: 'user',
          objectId: user.id,
          action: purpose === 'reset' ? 'reset' : 'invite',
          before: null,
          after: null,
        },
        now,
      );
      return link;
    });
  }

  private async issueLink(
    store: Store,
    user: UserRecord,
    purpose: LinkPurpose,
    now: number,
  ): Promise<OneTimeLink> {
    const secret = generateBrowserSecret();
    const expiresAt = now + LINK_LIFETIME_MS;
    await store.createUserLink({ digest: secret.digest, userId: user.id, purpose, expiresAt }, now);
    return { url: `${this.publicUrl}/link/${secret.plaintext}`, expiresAt };
  }

  private sees(account: Account): boolean {
    return seesAccount(this.actor, account);
  }

  /** Only an admin of the account (or of the operator) manages its users. */
  private requireUserAdmin(account: Account): void {
    if (!this.sees(account)) throw notFound('account not found');
    this.requireAdminRole();
  }

  /**
   * Users are the admins' (D13): others are refused once scope is settled, so another account's
   * user still reads as missing (404) before the role is checked.
   */
  private requireAdminRole(): void {
    if (!mayManageUsers(this.actor.role)) {
      throw new DomainError('forbidden', 'only an admin of the account may manage its users');
    }
  }

  private userId(): number | undefined {
    const match = /^user:(\d+)$/.exec(this.actor.id);
    return match ? Number(match[1]) : undefined;
  }
}

const invalid409 = (message: string) => new DomainError('conflict', message);
