import { formatMoney, micros } from '../../../domain/money.js';
import { CAMPAIGN_STATUSES, type Campaign, type Totals } from '../../../domain/campaigns.js';
import type { CampaignListRow, PacingProgress } from '../../../services/campaign-list.js';
import type { CampaignSortKey } from '../../../store/store.js';
import { campaignListHref, sortedBy, type CampaignListView } from '../campaign-list-query.js';
import { allowedActions, type CampaignAction } from '../../../domain/lifecycle.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { ListTable, type Paging, type SortHeader } from './parts.js';
import { flight, when } from './format.js';

const ACTION_LABELS: Record<CampaignAction, string> = {
  submit: 'Submit for review',
  approve: 'Approve',
  reject: 'Reject',
  pause: 'Pause',
  resume: 'Resume',
  archive: 'Archive',
};

export type CampaignRow = Campaign & { advertiserName: string };

/**
 * One form per action, so each works without JavaScript; archiving cannot be undone, so its button
 * opens a page that says so and asks first.
 */
function Actions(props: { campaign: Campaign; csrf: string; actions: CampaignAction[] }) {
  return (
    <div class="actions">
      {props.actions.map((action) =>
        action === 'archive' ? (
          <a
            class="button danger"
            href={`/campaigns/${props.campaign.id}/archive`}
            key={action}
            aria-label={`${ACTION_LABELS[action]}: ${props.campaign.title}`}
          >
            {ACTION_LABELS[action]}
          </a>
        ) : (
          <form method="post" action={`/campaigns/${props.campaign.id}/${action}`} key={action}>
            <CsrfField token={props.csrf} />
            <button type="submit" aria-label={`${ACTION_LABELS[action]}: ${props.campaign.title}`}>
              {ACTION_LABELS[action]}
            </button>
          </form>
        ),
      )}
    </div>
  );
}

function Status({ campaign }: { campaign: Campaign }) {
  return (
    <>
      <span class={`status status-${campaign.status}`}>{campaign.status.replace('_', ' ')}</span>
      {campaign.status === 'rejected' && campaign.rejectionReason && (
        <p class="note">Rejected: {campaign.rejectionReason}</p>
      )}
    </>
  );
}

/** A count as the list shows it: 1,234. */
const figure = (n: number): string => n.toLocaleString('en-US');

/** The statuses the filter offers, in lifecycle order, as people read them. */
const STATUS_CHOICES = CAMPAIGN_STATUSES.map((status) => [status, status.replace('_', ' ')] as const);

/** A count with its noun, singular for one: "1 click", "0 clicks", "1,234 impressions". */
const counted = (n: number, noun: string): string => `${figure(n)} ${noun}${n === 1 ? '' : 's'}`;

/** Impressions and clicks, one line each. */
function Figures({ totals }: { totals: Totals }) {
  return (
    <>
      {counted(totals.impressions, 'impression')}
      <br />
      {counted(totals.clicks, 'click')}
    </>
  );
}

/** Each cap's progress ("412 of 1,000 impressions today") with a meter, and even pacing's state. */
function Limits({ row, currency }: { row: CampaignListRow; currency: string }) {
  if (row.caps.length === 0 && !row.pacing) return <span class="note">no caps</span>;
  return (
    <ul class="limits-list">
      {row.caps.map((cap) => {
        const words = `${figure(cap.used)} of ${figure(cap.cap)} ${cap.units} ${cap.period === 'today' ? 'today' : 'in total'}`;
        return (
          <li key={`${cap.units}-${cap.period}`}>
            {words}
            <meter min={0} max={cap.cap} value={Math.min(cap.used, cap.cap)} aria-label={words} />
          </li>
        );
      })}
      {row.pacing && (
        <li>
          <PacingWords pacing={row.pacing} currency={currency} />
        </li>
      )}
    </ul>
  );
}

function PacingWords({ pacing, currency }: { pacing: PacingProgress; currency: string }) {
  if (pacing.state === 'held') {
    const spend = pacing.unit === 'micros';
    const amount = (value: number) => (spend ? formatMoney(micros(value), currency) : figure(value));
    return (
      <>
        Even pacing: ahead of plan ({amount(pacing.delivered)} {spend ? `${currency} spent` : 'delivered'},{' '}
        {amount(pacing.planned)} planned by now), held until {when(pacing.releasedAt)}
      </>
    );
  }
  if (pacing.state === 'behind') return <>Even pacing: behind plan, drawn {pacing.weightFactor}× as often</>;
  return <>Even pacing: on plan</>;
}

/**
 * Search by name or number and the status filter, as a form that loads the list (GET), so it works
 * without scripts; the sort chosen in the headers goes along.
 */
function Filters({ view }: { view: CampaignListView }) {
  const sortOnly = campaignListHref({ sort: view.sort });
  const sortParams = new URL(sortOnly, 'http://dashboard').searchParams;
  const filtered = view.status !== undefined || view.search !== undefined;
  return (
    <form method="get" action="/campaigns" class="inline filters" role="search" aria-label="Campaigns">
      <label for="q">Name or number</label>
      <input id="q" name="q" type="search" value={view.search ?? ''} maxLength={200} />
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">every status</option>
        {STATUS_CHOICES.map(([status, label]) => (
          <option key={status} value={status} selected={view.status === status}>
            {label}
          </option>
        ))}
      </select>
      {[...sortParams].map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <button type="submit">Show</button>
      {filtered && <a href={sortOnly}>Show every campaign</a>}
    </form>
  );
}

export function CampaignsPage(props: {
  page: PageContext;
  rows: CampaignListRow[];
  paging: Paging;
  view: CampaignListView;
  operator: boolean;
  canChange: boolean;
  /** The people of an advertiser or of the operator who may change things create campaigns here. */
  canCreate: boolean;
  /** The currency of every amount (`PLACARD_CURRENCY`). */
  currency: string;
  problem?: string;
}) {
  const { rows, page, view } = props;
  // Review is on its own page; here the advertiser's own lifecycle actions.
  const actionsOf = (campaign: Campaign) =>
    allowedActions(campaign.status).filter((action) => action !== 'approve' && action !== 'reject');
  const sortable = (text: string, by: CampaignSortKey): SortHeader => ({
    text,
    href: campaignListHref(sortedBy(view, by)),
    ...(view.sort.by === by && { sorted: view.sort.descending ? 'descending' : 'ascending' }),
  });
  const filtered = view.status !== undefined || view.search !== undefined;
  return (
    <Layout title="Campaigns" page={page} current="/campaigns">
      <Problem message={props.problem} />
      {props.canCreate && (
        <p>
          <a class="button" href="/campaigns/new">
            New campaign
          </a>
        </p>
      )}
      <Filters view={view} />
      {(view.sort.by === 'impressions' || view.sort.by === 'clicks') && (
        <p class="note">
          Sorted by delivery up to the last quarter hour summed (every few minutes); the figures shown include
          the minutes since.
        </p>
      )}
      <ListTable
        noun={['One campaign', 'campaigns']}
        rows={rows}
        paging={props.paging}
        empty={
          filtered
            ? 'No campaign matches: change the name or the status, or show every campaign.'
            : props.operator
              ? 'No campaigns yet. Create one with New campaign, or import them with placard campaigns import; advertisers create theirs after signing in.'
              : props.canCreate
                ? 'No campaigns yet. Create one with New campaign: it waits here as a draft until you submit it for review.'
                : 'No campaigns to show.'
        }
        columns={[
          {
            header: sortable('Campaign', 'name'),
            cell: ({ campaign }) => (
              <>
                <a href={`/campaigns/${campaign.id}`}>{campaign.title}</a>
                <p class="note">#{campaign.id}</p>
              </>
            ),
          },
          props.operator && { header: 'Advertiser', cell: (row) => row.advertiserName },
          { header: 'Status', cell: (row) => <Status campaign={row.campaign} /> },
          { header: 'Today', cell: (row) => <Figures totals={row.delivery.today} /> },
          {
            header: sortable('Impressions in total', 'impressions'),
            cell: (row) => figure(row.delivery.total.impressions),
          },
          { header: sortable('Clicks in total', 'clicks'), cell: (row) => figure(row.delivery.total.clicks) },
          {
            header: `Spend in total (${props.currency})`,
            cell: (row) => formatMoney(row.delivery.spendMicros, props.currency),
            class: 'money',
          },
          { header: 'Caps and pacing', cell: (row) => <Limits row={row} currency={props.currency} /> },
          {
            header: 'Flight',
            cell: ({ campaign }) => flight(campaign.startAt, campaign.endAt, campaign.timeZone),
          },
          { header: sortable('Created', 'newest'), cell: (row) => when(row.campaign.createdAt) },
          props.canChange && {
            header: 'Actions',
            cell: ({ campaign }) => (
              <Actions campaign={campaign} csrf={page.csrf} actions={actionsOf(campaign)} />
            ),
          },
        ]}
      />
    </Layout>
  );
}
