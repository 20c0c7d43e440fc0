import { generateApiKey } from '../domain/api-keys.js';
import { idFromText } from '../domain/ids.js';
import { isExpired } from '../domain/credentials.js';
import {
  alreadyDone,
  alreadyExists,
  DomainError,
  invalid,
  invalidField,
  notFound,
  unprocessable,
} from '../domain/errors.js';
import { MAX_LIMIT_SETTING } from '../domain/rate-limits.js';
import { SERVABLE_STATUSES } from '../domain/partner-blocks.js';
import type {
  ApiKeyRecord,
  ApiKeyStatus,
  NumberedPage,
  NumberedPageRequest,
  PageRequest,
  Partner,
  RateLimits,
  Store,
} from '../store/store.js';
import { audit } from './audit.js';
import { requireChange, requireOperator, sees } from './scope.js';
import { commitServed } from '../serving/serving-changes.js';
import { ServedService, type AuditedObject } from './served-service.js';
import { trimmedText } from './text-field.js';

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The only time the plaintext exists outside the partner's own configuration. */
  plaintext: string;
}

/** How long a rotated-out key keeps working unless the operator says otherwise. */
export const DEFAULT_ROTATION_HOURS = 24;
export const MAX_ROTATION_HOURS = 24 * 30;

/** A key's label: optional, but text when given (a number or a list is a mistake, not "no label"). */
function checkLabel(label: unknown): string | null {
  if (label === undefined || label === null) return null;
  if (typeof label !== 'string' || label.length > 100)
    throw invalidField('label', 'must be a string of at most 100 characters');
  return label;
}

function checkCategories(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.some((item) => typeof item !== 'string' || !/^[a-z][a-z0-9_-]{0,63}$/.test(item))
  ) {
    throw invalidField('blockedCategories', 'must be an array of lower-case category words');
  }
  return [...new Set(value as string[])].sort();
}

/** Advertiser ids as the API and the forms give them: whole numbers from 1, each once, in order. */
function checkAdvertiserIds(value: unknown): number[] {
  if (
    !Array.isArray(value) ||
    value.some((item) => typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
  ) {
    throw invalidField('blockedAdvertisers', 'must be an array of advertiser ids');
  }
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** An advertiser a partner may block, by the name people know it by. */
export interface BlockableAdvertiser {
  id: number;
  name: string;
}

/**
 * The rate limits named in `value`: a field left out keeps the key's current setting, `null`
 * puts it back to the default, so setting one limit never resets the others.
 */
function checkLimits(value: unknown): Partial<RateLimits> {
  const fields = (value ?? {}) as Record<string, unknown>;
  if (typeof fields !== 'object' || Array.isArray(fields))
    throw invalid('the rate limits must be a JSON object');
  const names: ReadonlyArray<keyof RateLimits> = ['fetchRate', 'fetchBurst', 'eventsRate', 'eventsBurst'];
  const limits: Partial<RateLimits> = {};
  for (const [name, raw] of Object.entries(fields)) {
    if (!names.includes(name as keyof RateLimits))
      throw unprocessable('invalid rate limits', [{ field: name, message: 'is not a rate limit' }]);
    if (raw === undefined) continue;
    if (
      raw !== null &&
      (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_LIMIT_SETTING)
    ) {
      throw invalidField(
        name,
        `must be an integer between 1 and ${MAX_LIMIT_SETTING}, or null for the default`,
      );
    }
    limits[name as keyof RateLimits] = raw;
  }
  return limits;
}

/** A key's status as operators see it: a rotated-out key past its expiry answers 401, so it is `expired`. */
export type KeyStatusView = ApiKeyStatus | 'expired';

export function keyStatus(key: ApiKeyRecord, now: number): KeyStatusView {
  return key.status !== 'revoked' && isExpired(key.expiresAt, now) ? 'expired' : key.status;
}

/**
 * Only a live key that was never rotated can be rotated: giving an expired key a new expiry would
 * bring it back to life, and rotating a key again would extend the life of a key already replaced.
 */
function refuseRotation(key: ApiKeyRecord, now: number): void {
  const status = keyStatus(key, now);
  if (status !== 'active') throw new DomainError('conflict', `cannot rotate an api key that is ${status}`);
  if (key.expiresAt !== null) {
    throw new DomainError(
      'conflict',
      `api key ${key.id} was already rotated and stops working at ${new Date(key.expiresAt).toISOString()}; rotate its replacement instead`,
    );
  }
}

/** A key as operators see it at `now`: never the digest. */
export function keyView(key: ApiKeyRecord, now: number) {
  return {
    id: key.id,
    partnerId: key.partnerId,
    label: key.label,
    prefix: key.displayPrefix,
    status: keyStatus(key, now),
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    browserRequests: key.browserRequests,
    lastBrowserRequestAt: key.lastBrowserRequestAt,
    expiresAt: key.expiresAt,
    revokedAt: key.revokedAt,
    suspendedAt: key.suspendedAt,
    suspendedReason: key.suspendedReason,
    rateLimits: key.rateLimits,
  };
}

/**
 * Why a partner's own people may not create a key now, or undefined when they may: while one of its
 * keys is suspended (for fraud, or any other reason of the operator's), a fresh key would serve on
 * the traffic the suspension stopped, so new keys for that partner are the operator's to give.
 */
export function keyCreationHold(keys: readonly ApiKeyRecord[]): string | undefined {
  const suspended = keys.find((key) => key.status === 'suspended');
  if (!suspended) return undefined;
  return (
    `api key ${suspended.displayPrefix}… is suspended (${suspended.suspendedReason ?? 'no reason given'}); ` +
    'while it is, only the operator may create keys for this partner'
  );
}

/**
 * Partners (the publishers that call the delivery API) and their API keys. Every change is
 * audited; changes to keys reach every instance's key registry within 2 s through the change feed.
 */
export class PartnerService extends ServedService {
  /** An API key as its changes are audited. */
  private readonly auditedKey: AuditedObject<ApiKeyRecord> = {
    type: 'api_key',
    find: (store, id) => this.visibleKey(store, id),
    view: keyView,
  };

  async createPartner(
    name: unknown,
    blockedCategories: unknown = [],
    blockedAdvertisers: unknown = [],
  ): Promise<Partner> {
    requireOperator(this.actor, 'create partners');
    const checked = trimmedText('name', name);
    const blocked = checkCategories(blockedCategories);
    const advertisers = checkAdvertiserIds(blockedAdvertisers);
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      if (await tx.findPartner(checked)) throw alreadyExists(`partner "${checked}" already exists`);
      const created = await tx.createPartner(checked, now);
      await this.refuseUnknownAdvertisers(tx, created, advertisers);
      if (blocked.length > 0 || advertisers.length > 0)
        await tx.updatePartner(
          created.id,
          { blockedCategories: blocked, blockedAdvertisers: advertisers },
          now,
        );
      const partner = (await tx.findPartner(created.id))!;
      await audit(
        tx,
        this.actor,
        { objectType: 'partner', objectId: partner.id, action: 'create', before: null, after: partner },
        now,
      );
      return partner;
    });
  }

  /**
   * Renames a partner or changes its blocks: its name and blocked categories are the operator's to
   * change, its blocked advertisers its own people's too.
   */
  async updatePartner(ref: string | number, changes: Record<string, unknown>): Promise<Partner> {
    const name = changes['name'] === undefined ? undefined : trimmedText('name', changes['name']);
    const blocked =
      changes['blockedCategories'] === undefined ? undefined : checkCategories(changes['blockedCategories']);
    const advertisers =
      changes['blockedAdvertisers'] === undefined
        ? undefined
        : checkAdvertiserIds(changes['blockedAdvertisers']);
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const before = await this.findPartnerIn(tx, ref);
      if (name === undefined && blocked === undefined && advertisers !== undefined) requireChange(this.actor);
      else requireOperator(this.actor, 'rename partners or change their blocked categories');
      if (name !== undefined && name !== before.name && (await tx.findPartner(name))) {
        throw alreadyExists(`partner "${name}" already exists`);
      }
      if (advertisers !== undefined) await this.refuseUnknownAdvertisers(tx, before, advertisers);
      await tx.updatePartner(
        before.id,
        {
          ...(name !== undefined && { name }),
          ...(blocked !== undefined && { blockedCategories: blocked }),
          ...(advertisers !== undefined && { blockedAdvertisers: advertisers }),
        },
        now,
      );
      const after = (await tx.findPartner(before.id))!;
      await audit(
        tx,
        this.actor,
        { objectType: 'partner', objectId: before.id, action: 'update', before, after },
        now,
      );
      return after;
    });
  }

  /**
   * Refuses blocking an advertiser the actor does not know (400, naming it). A partner's people know
   * the advertisers of the campaigns they may be served (`blockableAdvertisers`); one already
   * blocked stays, whatever its campaigns became.
   */
  private async refuseUnknownAdvertisers(store: Store, partner: Partner, ids: readonly number[]) {
    const added = ids.filter((id) => !partner.blockedAdvertisers.includes(id));
    if (added.length === 0) return;
    const known =
      this.actor.account.kind === 'operator'
        ? new Set((await store.advertiserNames(added)).keys())
        : new Set((await store.advertisersWithCampaignsIn(SERVABLE_STATUSES)).map((found) => found.id));
    const unknown = added.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const named = unknown.length === 1 ? 'an unknown advertiser' : 'unknown advertisers';
      throw invalidField('blockedAdvertisers', `names ${named}: ${unknown.join(', ')}`);
    }
  }

  /**
   * The advertisers the partner may block, by name, and its blocked ones with their names. The
   * operator's people choose among every advertiser; the partner's own among the advertisers of the
   * campaigns they may be served (approved: scheduled, running or paused), and no other's name.
   */
  async blockableAdvertisers(
    ref: string | number,
  ): Promise<{ partner: Partner; blocked: BlockableAdvertiser[]; choices: BlockableAdvertiser[] }> {
    const partner = await this.findPartner(ref);
    const choices =
      this.actor.account.kind === 'operator'
        ? (await this.store.listAdvertisers()).map(({ id, name }) => ({ id, name }))
        : await this.store.advertisersWithCampaignsIn(SERVABLE_STATUSES);
    const names = await this.store.advertiserNames(partner.blockedAdvertisers);
    const blocked = partner.blockedAdvertisers.map((id) => ({
      id,
      name: names.get(id) ?? `advertiser ${id}`,
    }));
    return {
      partner,
      blocked: blocked.sort((a, b) => a.name.localeCompare(b.name)),
      choices: choices
        .filter((advertiser) => !partner.blockedAdvertisers.includes(advertiser.id))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  async listPartners(request?: PageRequest): Promise<Partner[]> {
    const account = this.actor.account;
    if (account.kind === 'operator') return this.store.listPartners(request);
    const own = account.kind === 'partner' ? await this.store.findPartner(account.id) : undefined;
    return own && (request?.after === undefined || own.id > Number(request.after)) ? [own] : [];
  }

  /** One numbered page of the partners the actor may see, newest first, with how many there are. */
  async partnerPage(request: NumberedPageRequest): Promise<NumberedPage<Partner>> {
    const account = this.actor.account;
    if (account.kind === 'operator') return this.store.partnerPage(request);
    const own = account.kind === 'partner' ? await this.store.findPartner(account.id) : undefined;
    return { rows: own && request.offset === 0 ? [own] : [], total: own ? 1 : 0 };
  }

  /** Finds a partner by numeric id or by exact name. */
  findPartner(ref: string | number): Promise<Partner> {
    return this.findPartnerIn(this.store, ref);
  }

  private async findPartnerIn(store: Store, ref: string | number): Promise<Partner> {
    // Digits are an id (none past the ids a store can hold: PostgreSQL would refuse the look-up).
    const id = typeof ref === 'number' ? ref : /^\d+$/.test(ref) ? (idFromText(ref) ?? 0) : undefined;
    const partner = await store.findPartner(id ?? ref);
    // Another account's partner reads exactly like a missing one (D13).
    if (!partner || !sees(this.actor, { kind: 'partner', id: partner.id }))
      throw notFound(`partner ${JSON.stringify(String(ref))} not found`);
    return partner;
  }

  async createKey(partnerRef: string | number, label: unknown = null): Promise<CreatedKey> {
    const checked = checkLabel(label);
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const partner = await this.findPartnerIn(tx, partnerRef);
      requireChange(this.actor);
      if (this.actor.account.kind !== 'operator') {
        const hold = keyCreationHold(await tx.listApiKeys(partner.id));
        if (hold !== undefined) throw new DomainError('forbidden', hold);
      }
      const created = await this.issueKey(tx, partner.id, checked, now, null);
      return created;
    });
  }

  /** Generates, stores and audits a new key; its plaintext leaves only through the return value. */
  private async issueKey(
    store: Store,
    partnerId: number,
    label: string | null,
    now: number,
    reason: string | null,
  ): Promise<CreatedKey> {
    const generated = generateApiKey();
    const key = await store.createApiKey(
      { partnerId, label, displayPrefix: generated.displayPrefix, digest: generated.digest },
      now,
    );
    const change = {
      objectType: 'api_key',
      objectId: key.id,
      action: 'create',
      reason,
      before: null,
      after: keyView(key, now),
    } as const;
    await audit(store, this.actor, change, now);
    return { key, plaintext: generated.plaintext };
  }

  async listKeys(partnerRef?: string | number, request?: PageRequest): Promise<ApiKeyRecord[]> {
    const account = this.actor.account;
    if (partnerRef === undefined && account.kind !== 'operator') {
      return account.kind === 'partner' ? this.store.listApiKeys(account.id, request) : [];
    }
    const partnerId = partnerRef === undefined ? undefined : (await this.findPartner(partnerRef)).id;
    return this.store.listApiKeys(partnerId, request);
  }

  /** One numbered page of the keys the actor may see, newest first, with their count. */
  keyPage(request: NumberedPageRequest): Promise<NumberedPage<ApiKeyRecord>> {
    const account = this.actor.account;
    if (account.kind === 'operator') return this.store.apiKeyPage(undefined, request);
    if (account.kind === 'partner') return this.store.apiKeyPage(account.id, request);
    return Promise.resolve({ rows: [], total: 0 });
  }

  getKey(id: number): Promise<ApiKeyRecord> {
    return this.visibleKey(this.store, id);
  }

  /** The key, or not found when it does not exist or belongs to a partner the actor may not see. */
  private async visibleKey(store: Store, id: number): Promise<ApiKeyRecord> {
    const key = await store.getApiKey(id);
    if (!key || !sees(this.actor, { kind: 'partner', id: key.partnerId }))
      throw notFound(`api key ${id} not found`);
    return key;
  }

  /** Applies `change` to one key and audits it; `change` throws to refuse the key's current state. */
  private changeKey(
    id: number,
    action: string,
    reason: string | null,
    change: (before: ApiKeyRecord, tx: Store, now: number) => Promise<void>,
  ): Promise<ApiKeyRecord> {
    return this.changeAudited(this.auditedKey, id, action, async (before, tx, now) => {
      // The partner's people create, rotate and revoke their keys; suspensions and limits are the operator's.
      // A suspended key stays as the operator left it: revoked by its partner, it would no longer
      // hold the partner's new keys for the operator (keyCreationHold).
      if (action === 'revoke' && before.status !== 'suspended') requireChange(this.actor);
      else if (action === 'revoke') requireOperator(this.actor, 'revoke a suspended key');
      else requireOperator(this.actor, 'suspend, reinstate or limit keys');
      await change(before, tx, now);
      return { after: (await tx.getApiKey(id))!, reason };
    });
  }

  /** Revokes a key immediately; every instance refuses it with 401 within 2 s. */
  revokeKey(id: number): Promise<ApiKeyRecord> {
    return this.changeKey(id, 'revoke', null, async (before, tx, now) => {
      if (before.status === 'revoked') throw alreadyDone(`api key ${id} is already revoked`);
      await tx.updateApiKey(id, { status: 'revoked', revokedAt: now });
    });
  }

  /** Suspends a key (fraud or operator decision); it gets 403 everywhere within 2 s. */
  suspendKey(id: number, reason: unknown): Promise<ApiKeyRecord> {
    if (typeof reason !== 'string' || reason.trim() === '')
      throw invalidField('reason', 'is required to suspend a key');
    return this.changeKey(id, 'suspend', reason.trim(), async (before, tx, now) => {
      const status = keyStatus(before, now);
      const refusal = `cannot suspend an api key that is ${status}`;
      if (status === 'suspended') throw alreadyDone(refusal);
      if (status !== 'active') throw new DomainError('conflict', refusal);
      await tx.updateApiKey(id, { status: 'suspended', suspendedAt: now, suspendedReason: reason.trim() });
    });
  }

  reinstateKey(id: number): Promise<ApiKeyRecord> {
    return this.changeKey(id, 'reinstate', null, async (before, tx, now) => {
      const refusal = `cannot reinstate an api key that is ${before.status}`;
      if (keyStatus(before, now) === 'active') throw alreadyDone(refusal);
      if (before.status !== 'suspended') throw new DomainError('conflict', refusal);
      await tx.updateApiKey(id, { status: 'active', suspendedAt: null, suspendedReason: null });
    });
  }

  /** Changes the limits named in `limits`; the others keep their value. */
  setKeyLimits(id: number, limits: unknown): Promise<ApiKeyRecord> {
    const checked = checkLimits(limits);
    return this.changeKey(id, 'set_rate_limits', null, async (before, tx) => {
      await tx.updateApiKey(id, { rateLimits: { ...before.rateLimits, ...checked } });
    });
  }

  /**
   * Issues a replacement key; the old one keeps working until `expiresInHours` from now (default 24),
   * so the partner can deploy the new one without downtime.
   */
  async rotateKey(
    id: number,
    expiresInHours: unknown = DEFAULT_ROTATION_HOURS,
  ): Promise<CreatedKey & { previous: ApiKeyRecord }> {
    if (typeof expiresInHours !== 'number' || !(expiresInHours >= 0) || expiresInHours > MAX_ROTATION_HOURS) {
      throw invalidField('expiresInHours', `must be a number from 0 to ${MAX_ROTATION_HOURS}`);
    }
    const now = this.clock();
    return commitServed(this.store, this.serving, async (tx) => {
      const before = await this.visibleKey(tx, id);
      requireChange(this.actor);
      refuseRotation(before, now);
      const expiresAt = now + Math.round(expiresInHours * 3_600_000);
      await tx.updateApiKey(id, { expiresAt });
      const previous = (await tx.getApiKey(id))!;
      const created = await this.issueKey(tx, before.partnerId, before.label, now, `rotation of key ${id}`);
      await audit(
        tx,
        this.actor,
        {
          objectType: 'api_key',
          objectId: id,
          action: 'rotate',
          before: keyView(before, now),
          after: keyView(previous, now),
        },
        now,
      );
      return { ...created, previous };
    });
  }
}
