import {
  DEFAULT_FLAG_POLICY,
  FLAG_STATUSES,
  KEY_SIGNALS,
  PARTNER_SIGNALS,
  type FlagPolicy,
  type KeySignal,
  type FlagStatus,
} from '../domain/key-flags.js';
import { alreadyDone, invalidField, notFound } from '../domain/errors.js';
import type { KeyFlagRecord, NumberedPage, NumberedPageRequest, PageRequest, Store } from '../store/store.js';
import { audit } from './audit.js';
import { keyStatus, PartnerService } from './partners.js';
import { requireOperator, requireOperatorAccount, sees } from './scope.js';
import { UNSERVED } from '../serving/serving-changes.js';
import { ServedService, type AuditedObject } from './served-service.js';

/** The `meta` key of the operator's policy (JSON); absent means the default: off. */
export const FLAG_POLICY_KEY = 'flag_policy';

/** A flag as the API, the CLI and the dashboard show it: the evidence's summary up front. */
export function flagView(flag: KeyFlagRecord) {
  return {
    id: flag.id,
    apiKeyId: flag.apiKeyId,
    partnerId: flag.partnerId,
    signal: flag.signal,
    status: flag.status,
    summary: typeof flag.evidence['summary'] === 'string' ? flag.evidence['summary'] : flag.signal,
    evidence: flag.evidence,
    createdAt: flag.createdAt,
    updatedAt: flag.updatedAt,
    reviewedAt: flag.reviewedAt,
    reviewedBy: flag.reviewedBy,
    reviewNote: flag.reviewNote,
  };
}

/**
 * The keys a flag names: its own, or for a partner flag (`partner ctr`, `shared addresses`) every
 * key in its evidence.
 */
export function flaggedKeyIds(flag: KeyFlagRecord): number[] {
  const keys = flag.evidence['keys'];
  if (!PARTNER_SIGNALS.includes(flag.signal) || !Array.isArray(keys)) return [flag.apiKeyId];
  return keys.map((key) => Number((key as { apiKeyId: unknown }).apiKeyId));
}

/** A review's text: required, trimmed, at most 500 characters. */
function checkText(value: unknown, field: string, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidField(field, `is required to ${what}`);
  if (value.trim().length > 500) throw invalidField(field, 'must be at most 500 characters');
  return value.trim();
}

export function checkFlagStatus(value: unknown): FlagStatus | undefined {
  if (value === undefined || value === '') return undefined;
  if (!FLAG_STATUSES.includes(value as FlagStatus))
    throw invalidField('status', `must be one of: ${FLAG_STATUSES.join(', ')}`);
  return value as FlagStatus;
}

/** The policy with the fields given changed; a field left out keeps its value. */
function checkPolicy(value: unknown, current: FlagPolicy): FlagPolicy {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidField('policy', 'must be a JSON object');
  const fields = value as Record<string, unknown>;
  const policy = { ...current, signals: [...current.signals] };
  for (const [name, raw] of Object.entries(fields)) {
    if (raw === undefined) continue;
    if (name === 'autoSuspend') {
      if (typeof raw !== 'boolean') throw invalidField('autoSuspend', 'must be true or false');
      policy.autoSuspend = raw;
    } else if (name === 'signals') {
      if (!Array.isArray(raw) || raw.some((signal) => !KEY_SIGNALS.includes(signal as KeySignal)))
        throw invalidField('signals', `must be a list of: ${KEY_SIGNALS.join(', ')}`);
      policy.signals = KEY_SIGNALS.filter((signal) => raw.includes(signal));
    } else if (name === 'multiplier') {
      if (typeof raw !== 'number' || !(raw >= 1) || raw > 100)
        throw invalidField('multiplier', 'must be a number from 1 to 100');
      policy.multiplier = raw;
    } else {
      throw invalidField(name, 'is not a known field');
    }
  }
  return policy;
}

/** The stored policy, or the default (off) when none was ever set. */
export async function readFlagPolicy(store: Store): Promise<FlagPolicy> {
  const stored = await store.getMeta(FLAG_POLICY_KEY);
  return stored === undefined
    ? { ...DEFAULT_FLAG_POLICY, signals: [...DEFAULT_FLAG_POLICY.signals] }
    : { ...DEFAULT_FLAG_POLICY, ...(JSON.parse(stored) as Partial<FlagPolicy>) };
}

/**
 * Key flags (D15) and their review: the operator reads every flag and dismisses one or suspends its
 * key; a partner's people read their own keys' flags (that is how a partner finds a broken
 * integration before it is suspended). Scope as everywhere: another partner's flag reads as missing.
 */
export class KeyFlagService extends ServedService {
  /** A flag as its reviews are audited. */
  private readonly audited: AuditedObject<KeyFlagRecord> = {
    type: 'key_flag',
    find: (store, id) => this.visible(store, id),
    view: flagView,
  };

  /** Newest first; a partner's people get their own, an advertiser's none. */
  async list(filter: { status?: unknown } = {}, request: PageRequest = {}): Promise<KeyFlagRecord[]> {
    const status = checkFlagStatus(filter.status);
    const account = this.actor.account;
    if (account.kind === 'advertiser') return [];
    return this.store.listKeyFlags(
      { ...(status && { status }), ...(account.kind === 'partner' && { partnerId: account.id }) },
      { newestFirst: true, ...request },
    );
  }

  /** One numbered page of the open flags the actor may see, newest first, with their count. */
  async openPage(request: NumberedPageRequest): Promise<NumberedPage<KeyFlagRecord>> {
    const account = this.actor.account;
    if (account.kind === 'advertiser') return { rows: [], total: 0 };
    return this.store.keyFlagPage(
      { status: 'open', ...(account.kind === 'partner' && { partnerId: account.id }) },
      request,
    );
  }

  /** One numbered page of the reviewed flags (dismissed, suspended) the actor may see, newest first. */
  async reviewedPage(request: NumberedPageRequest): Promise<NumberedPage<KeyFlagRecord>> {
    const account = this.actor.account;
    if (account.kind === 'advertiser') return { rows: [], total: 0 };
    return this.store.keyFlagPage(
      { reviewed: true, ...(account.kind === 'partner' && { partnerId: account.id }) },
      request,
    );
  }

  get(id: number): Promise<KeyFlagRecord> {
    return this.visible(this.store, id);
  }

  private async visible(store: Store, id: number): Promise<KeyFlagRecord> {
    const flag = await store.getKeyFlag(id);
    if (!flag || !sees(this.actor, { kind: 'partner', id: flag.partnerId }))
      throw notFound(`flag ${id} not found`);
    return flag;
  }

  /** Closes the flag as reviewed and fine; the key's signal is not flagged again for a day. */
  dismiss(id: number, note: unknown): Promise<KeyFlagRecord> {
    return this.review(id, 'dismiss', async (_before, tx, now) => {
      const text = checkText(note, 'note', 'dismiss a flag');
      await tx.reviewKeyFlag(id, { status: 'dismissed', at: now, by: this.actor.id, note: text });
      return text;
    });
  }

  /**
   * Suspends the flag's key, or for a partner flag every key it lists (through the partner service, so the suspension is audited with the
   * actor and every instance answers 403 within 2 s) and closes the flag. A key already suspended
   * only closes the flag.
   */
  suspend(id: number, reason?: unknown): Promise<KeyFlagRecord> {
    return this.review(id, 'suspend', async (before, tx, now) => {
      const text =
        reason === undefined || reason === null || reason === ''
          ? `flagged: ${flagView(before).summary}`
          : checkText(reason, 'reason', 'suspend a key');
      const partners = new PartnerService(tx, this.actor, this.clock);
      for (const id of flaggedKeyIds(before)) {
        const key = await tx.getApiKey(id);
        if (key && keyStatus(key, now) === 'active') await partners.suspendKey(id, text);
      }
      await tx.reviewKeyFlag(id, { status: 'suspended', at: now, by: this.actor.id, note: text });
      return text;
    });
  }

  private review(
    id: number,
    action: 'dismiss' | 'suspend',
    change: (before: KeyFlagRecord, tx: Store, now: number) => Promise<string>,
  ): Promise<KeyFlagRecord> {
    // A dismissal changes nothing fetches read.
    const serving = action === 'suspend' ? this.serving : UNSERVED;
    return this.changeAudited(
      this.audited,
      id,
      action,
      async (before, tx, now) => {
        requireOperator(this.actor, 'review flags');
        if (before.status !== 'open') throw alreadyDone(`flag ${id} was already reviewed (${before.status})`);
        const reason = await change(before, tx, now);
        return { after: (await tx.getKeyFlag(id))!, reason };
      },
      serving,
    );
  }

  async policy(): Promise<FlagPolicy> {
    requireOperatorAccount(this.actor, 'read the flag policy');
    return readFlagPolicy(this.store);
  }

  /** Changes the fields given; audited. */
  async setPolicy(changes: unknown): Promise<FlagPolicy> {
    requireOperator(this.actor, 'change the flag policy');
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const before = await readFlagPolicy(tx);
      const after = checkPolicy(changes, before);
      await tx.setMeta(FLAG_POLICY_KEY, JSON.stringify(after));
      await audit(
        tx,
        this.actor,
        { objectType: 'flag_policy', objectId: FLAG_POLICY_KEY, action: 'update', before, after },
        now,
      );
      return after;
    });
  }
}
