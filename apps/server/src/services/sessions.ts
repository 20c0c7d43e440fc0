import { generateBrowserSecret, digestApiKey, isWellFormedBrowserSecret } from '../domain/api-keys.js';
import { FailureBackoff, type BackoffPolicy } from '../domain/failure-backoff.js';
import { BucketMap, monotonicNow, type BucketPolicy } from '../domain/token-bucket.js';
import { DomainError } from '../domain/errors.js';
import { checkNewPassword } from '../domain/passwords.js';
import type { SessionRecord, Store, UserRecord } from '../store/store.js';
import { audit, type Actor } from './audit.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';

/** A session ends after an hour without a request, and 12 hours after sign-in regardless (D13). */
export const SESSION_IDLE_MS = 3_600_000;
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** "Last seen" is written at most this often per session, so browsing is not a write per page. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

/** Sign-in attempts per client address, whatever the account: 10 at once, then one every 6 seconds. */
export const ADDRESS_SIGN_IN_POLICY: BucketPolicy = { perSecond: 1 / 6, burst: 10 };
/**
 * Failed sign-ins per e-mail address typed (known or not) from one client address: 5 cost
 * nothing, then that client waits 30 seconds before its next try at that account, and twice as
 * long after each further failure, up to 15 minutes (about 4 guesses an hour). A success, or a day
 * without a failure, starts the count again. There is deliberately no limit per account alone: it
 * would let anyone lock a person out by typing their e-mail address; see docs/operations.md.
 */
export const ACCOUNT_SIGN_IN_BACKOFF: BackoffPolicy = {
  free: 5,
  firstWaitMs: 30_000,
  maxWaitMs: 15 * 60_000,
  forgetAfterMs: 24 * 3_600_000,
};

/** The one answer for an unknown address, a wrong password and a disabled user alike. */
export const WRONG_SIGN_IN = 'the e-mail address or the password is wrong';
export const INVALID_LINK = 'this link no longer works: it was used, it expired, or a newer one replaced it';

export type SignInResult =
  | { ok: true; secret: string; user: UserRecord }
  | { ok: false; problem: 'wrong' }
  | { ok: false; problem: 'throttled'; retryAfterSeconds: number };

/** A signed-in person: who they are and what they may see and do. */
export interface SignedIn {
  user: UserRecord;
  session: SessionRecord;
  actor: Actor;
  /** The account's name as people know it: "Operator", or the advertiser's or partner's name. */
  accountName: string;
}

export function actorOf(user: UserRecord): Actor {
  return { id: `user:${user.id}`, account: user.account, role: user.role };
}

/**
 * Sign-in, sessions and one-time links (D13). Sessions live in the store, so every instance knows
 * them and an admin can end them; the browser holds only a random secret whose digest is stored.
 * Attempts are limited per client address, and failures per e-mail address typed from one client
 * address, in this instance's memory.
 */
export class Sessions {
  private readonly byAddress = new BucketMap(100_000);
  /** Keyed by client and e-mail address together: a guesser elsewhere never slows the account's owner. */
  private readonly byPair = new FailureBackoff(ACCOUNT_SIGN_IN_BACKOFF, 100_000);

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
    /** Times the limits: monotonic, so stepping the wall clock back blocks no sign-in. */
    private readonly monotonic: () => number = monotonicNow,
  ) {}

  /** `source` is the client (its address, or its IPv6 /64) the attempt counts against. */
  async signIn(
    email: string,
    password: string,
    source: string,
    userAgent: string | null = null,
  ): Promise<SignInResult> {
    const tick = this.monotonic();
    const typed = email.trim().toLowerCase().slice(0, 254);
    const pair = `${source} ${typed}`;
    const wait = Math.max(
      this.byAddress.take(source, ADDRESS_SIGN_IN_POLICY, tick),
      this.byPair.wait(pair, tick),
    );
    if (wait > 0) return { ok: false, problem: 'throttled', retryAfterSeconds: wait };
    const found = await this.store.findUserForSignIn(typed);
    // The same work whether or not the address is known, so timing tells nothing either.
    const hashToCheck = found?.passwordHash ?? (await decoyHash());
    const matches = await verifyPassword(hashToCheck, password.slice(0, 1024));
    if (!found || found.passwordHash === null || !matches || found.user.disabledAt !== null) {
      this.byPair.fail(pair, tick);
      return { ok: false, problem: 'wrong' };
    }
    this.byPair.succeed(pair);
    const now = this.clock();
    return { ok: true, secret: await this.open(this.store, found.user, userAgent, now), user: found.user };
  }

  /**
   * Sets the password through a one-time link (an invitation or a reset) and signs the person in.
   * A reset ends every other session of the user.
   */
  async useLink(linkSecret: string, password: unknown, userAgent: string | null = null) {
    // Whose link it is first: the password must not be built on their e-mail address.
    const { user: holder } = await this.describeLink(linkSecret);
    const hashed = await hashPassword(checkNewPassword(password, 'password', holder.email));
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const { link, user } = await this.validLinkIn(tx, linkSecret, now);
      if (!(await tx.useUserLink(link.id, now))) throw new DomainError('not_found', INVALID_LINK);
      await tx.updateUser(user.id, { passwordHash: hashed }, now);
      await tx.endSessions({ userId: user.id }, now);
      const actor = actorOf(user);
      await audit(
        tx,
        actor,
        { objectType: 'user', objectId: user.id, action: 'set_password', before: null, after: null },
        now,
      );
      return { secret: await this.open(tx, user, userAgent, now), user };
    });
  }

  /** What a one-time link is for, or a not-found error when it no longer works. */
  async describeLink(linkSecret: string): Promise<{ user: UserRecord; purpose: 'invitation' | 'reset' }> {
    const { link, user } = await this.validLinkIn(this.store, linkSecret, this.clock());
    return { user, purpose: link.purpose };
  }

  /** The person behind a session cookie's secret, or undefined when it ended, idled out or expired. */
  async authenticate(secret: string | undefined): Promise<SignedIn | undefined> {
    if (secret === undefined || !isWellFormedBrowserSecret(secret)) return undefined;
    const session = await this.store.findSession(digestApiKey(secret));
    const now = this.clock();
    if (!session || session.endedAt !== null) return undefined;
    if (now >= session.expiresAt || now >= session.lastSeenAt + SESSION_IDLE_MS) return undefined;
    const user = await this.store.getUser(session.userId);
    if (!user || user.disabledAt !== null) return undefined;
    if (now - session.lastSeenAt >= LAST_SEEN_RESOLUTION_MS) await this.store.touchSession(session.id, now);
    return { user, session, actor: actorOf(user), accountName: await this.accountName(user) };
  }

  private async accountName(user: UserRecord): Promise<string> {
    const account = user.account;
    if (account.kind === 'operator') return 'Operator';
    const found =
      account.kind === 'advertiser'
        ? await this.store.findAdvertiser(account.id)
        : await this.store.findPartner(account.id);
    return found?.name ?? `${account.kind} ${account.id}`;
  }

  /** Ends the session this secret opened (sign-out). */
  async signOut(secret: string | undefined): Promise<void> {
    if (secret === undefined || !isWellFormedBrowserSecret(secret)) return;
    const session = await this.store.findSession(digestApiKey(secret));
    if (session) await this.store.endSessions({ id: session.id }, this.clock());
  }

  /** Changes the signed-in user's password; every other session of theirs ends. */
  async changePassword(signedIn: SignedIn, current: string, next: unknown): Promise<void> {
    const found = await this.store.findUserForSignIn(signedIn.user.email);
    if (!found?.passwordHash || !(await verifyPassword(found.passwordHash, current))) {
      throw new DomainError('invalid', 'the current password is wrong', [
        { field: 'currentPassword', message: 'is wrong' },
      ]);
    }
    const hashed = await hashPassword(checkNewPassword(next, 'newPassword', signedIn.user.email));
    const now = this.clock();
    await this.store.transaction(async (tx) => {
      await tx.updateUser(signedIn.user.id, { passwordHash: hashed }, now);
      for (const other of await tx.listSessions(signedIn.user.id)) {
        if (other.id !== signedIn.session.id) await tx.endSessions({ id: other.id }, now);
      }
      await audit(
        tx,
        signedIn.actor,
        { objectType: 'user', objectId: signedIn.user.id, action: 'set_password', before: null, after: null },
        now,
      );
    });
  }

  private async validLinkIn(store: Store, linkSecret: string, now: number) {
    const link = isWellFormedBrowserSecret(linkSecret)
      ? await store.findUserLink(digestApiKey(linkSecret))
      : undefined;
    const user = link && (await store.getUser(link.userId));
    if (!link || !user || link.usedAt !== null || now >= link.expiresAt || user.disabledAt !== null) {
      throw new DomainError('not_found', INVALID_LINK);
    }
    return { link, user };
  }

  private async open(store: Store, user: UserRecord, userAgent: string | null, now: number): Promise<string> {
    const secret = generateBrowserSecret();
    await store.createSession(
      {
        digest: secret.digest,
        userId: user.id,
        expiresAt: now + SESSION_ABSOLUTE_MS,
        userAgent: userAgent?.slice(0, 300) ?? null,
      },
      now,
    );
    return secret.plaintext;
  }
}
