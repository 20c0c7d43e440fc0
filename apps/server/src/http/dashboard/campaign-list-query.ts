import type { FastifyRequest } from 'fastify';
import { CAMPAIGN_STATUSES, type CampaignStatus } from '../../domain/campaigns.js';
import { CAMPAIGN_SORTS, type CampaignSort, type CampaignSortKey } from '../../services/campaign-list.js';

/** The longest search the list takes (titles are at most 200 characters). */
const MAX_SEARCH = 200;

/**
 * What the campaigns list shows, all of it in the query string so a link reproduces the view and
 * the page works without scripts: `?status=running&q=summer&sort=impressions&order=desc&page=2`.
 * A value the list does not know is left out, as if not given.
 */
export interface CampaignListView {
  status?: CampaignStatus;
  search?: string;
  sort: CampaignSort;
}

/** Each sort's first direction: names A to Z, figures and age largest first. */
const FIRST_DESCENDING: Record<CampaignSortKey, boolean> = {
  newest: true,
  name: false,
  impressions: true,
  clicks: true,
};

export function campaignListView(request: FastifyRequest): CampaignListView {
  const query = request.query as Record<string, unknown>;
  const text = (name: string) => (typeof query[name] === 'string' ? query[name] : undefined);
  const status = text('status');
  const search = text('q')?.trim().slice(0, MAX_SEARCH);
  const by = (CAMPAIGN_SORTS as readonly string[]).includes(text('sort') ?? '')
    ? (text('sort') as CampaignSortKey)
    : 'newest';
  const order = text('order');
  const descending = order === 'asc' ? false : order === 'desc' ? true : FIRST_DESCENDING[by];
  return {
    ...((CAMPAIGN_STATUSES as readonly string[]).includes(status ?? '') && {
      status: status as CampaignStatus,
    }),
    ...(search && { search }),
    sort: { by, descending },
  };
}

/**
 * The list's address for `view` (from its first page): only what differs from the default view
 * is in it, so the plain list is `/campaigns`.
 */
export function campaignListHref(view: CampaignListView): string {
  const params = new URLSearchParams();
  if (view.status) params.set('status', view.status);
  if (view.search) params.set('q', view.search);
  if (view.sort.by !== 'newest') params.set('sort', view.sort.by);
  if (view.sort.descending !== FIRST_DESCENDING[view.sort.by])
    params.set('order', view.sort.descending ? 'desc' : 'asc');
  const query = params.toString();
  return query === '' ? '/campaigns' : `/campaigns?${query}`;
}

/** The view sorted by `by`: its first direction, or the other one when the list is sorted so already. */
export function sortedBy(view: CampaignListView, by: CampaignSortKey): CampaignListView {
  const descending = view.sort.by === by ? !view.sort.descending : FIRST_DESCENDING[by];
  return { ...view, sort: { by, descending } };
}
