import { canSee, type Account } from '../domain/accounts.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';

/** The kinds of object people know by a name rather than by their id. */
export type NamedKind = 'campaign' | 'advertiser' | 'partner';

/** Names by id of each kind; an id without a name is unknown or not the actor's to see. */
export type NameIndex = Record<NamedKind, Map<number, string>>;

/** The ids to name, by kind. */
export type NameRequest = Partial<Record<NamedKind, Iterable<number>>>;

/**
 * The names behind ids, so a table or an export shows a campaign's title, an advertiser's or a
 * partner's name beside each id. Scoped like every read (D13): a campaign's title only to its
 * advertiser's people and the operator's, an advertiser's or partner's name only to its own people
 * and the operator's; for anything else the name stays empty and the id speaks alone.
 */
export async function namesOf(store: Store, actor: Actor, request: NameRequest): Promise<NameIndex> {
  const index: NameIndex = { campaign: new Map(), advertiser: new Map(), partner: new Map() };
  const distinct = (ids: Iterable<number> | undefined) => [...new Set(ids ?? [])];
  for (const campaign of await store.getCampaigns(distinct(request.campaign))) {
    if (canSee(actor.account, { kind: 'advertiser', id: campaign.advertiserId }))
      index.campaign.set(campaign.id, campaign.title);
  }
  // One look-up per id: a table names the few on its page, not every advertiser or partner there is.
  for (const id of distinct(request.advertiser)) {
    const advertiser = canSee(actor.account, { kind: 'advertiser', id })
      ? await store.findAdvertiser(id)
      : undefined;
    if (advertiser) index.advertiser.set(id, advertiser.name);
  }
  for (const id of distinct(request.partner)) {
    const partner = canSee(actor.account, { kind: 'partner', id }) ? await store.findPartner(id) : undefined;
    if (partner) index.partner.set(id, partner.name);
  }
  return index;
}

/** The name of an account as people read it: its advertiser's or partner's name, or "Operator". */
export function accountName(account: Account, names: NameIndex): string | undefined {
  return account.kind === 'operator' ? 'Operator' : names[account.kind].get(account.id);
}

/** The ids of advertisers and partners behind these accounts, to name them with `namesOf`. */
export function accountIds(accounts: Iterable<Account>): NameRequest {
  const advertiser: number[] = [];
  const partner: number[] = [];
  for (const account of accounts) {
    if (account.kind === 'advertiser') advertiser.push(account.id);
    else if (account.kind === 'partner') partner.push(account.id);
  }
  return { advertiser, partner };
}

/**
 * The name an audited object had at the change, read from the entry itself (the version after it,
 * or before it for a removal): a campaign's title, an advertiser's or partner's name, a key's or
 * token's label, a user's e-mail address. The entry keeps it even once the object is renamed.
 */
export function auditedName(entry: { before: unknown; after: unknown }): string | undefined {
  for (const version of [entry.after, entry.before]) {
    if (typeof version !== 'object' || version === null) continue;
    const fields = version as Record<string, unknown>;
    for (const field of ['title', 'name', 'label', 'email']) {
      const value = fields[field];
      if (typeof value === 'string' && value !== '') return value;
    }
  }
  return undefined;
}
