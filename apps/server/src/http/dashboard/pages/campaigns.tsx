import type { Campaign } from '../../../domain/campaigns.js';
import { allowedActions, type CampaignAction } from '../../../domain/lifecycle.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { DataTable } from './parts.js';
import { flight } from './format.js';
import type { FieldChange } from '../../../services/campaign-review.js';

const ACTION_LABELS: Record<CampaignAction, string> = {
  submit: 'Submit for review',
  approve: 'Approve',
  reject: 'Reject',
  pause: 'Pause',
  resume: 'Resume',
  archive: 'Archive',
};

export type CampaignRow = Campaign & { advertiserName: string };

/** One form per action, so each works without JavaScript. */
function Actions(props: { campaign: CampaignRow; csrf: string; actions: CampaignAction[] }) {
  return (
    <div class="actions">
      {props.actions.map((action) => (
        <form method="post" action={`/campaigns/${props.campaign.id}/${action}`} key={action}>
          <CsrfField token={props.csrf} />
          <button
            type="submit"
            class={action === 'archive' ? 'danger' : undefined}
            aria-label={`${ACTION_LABELS[action]}: ${props.campaign.title}`}
          >
            {ACTION_LABELS[action]}
          </button>
        </form>
      ))}
    </div>
  );
}

function Status({ campaign }: { campaign: CampaignRow }) {
  return (
    <>
      <span class={`status status-${campaign.status}`}>{campaign.status.replace('_', ' ')}</span>
      {campaign.status === 'rejected' && campaign.rejectionReason && (
        <p class="note">Rejected: {campaign.rejectionReason}</p>
      )}
    </>
  );
}

export function CampaignsPage(props: {
  page: PageContext;
  campaigns: CampaignRow[];
  operator: boolean;
  canChange: boolean;
  /** An advertiser's people who may change things create campaigns here. */
  canCreate: boolean;
  problem?: string;
}) {
  const { campaigns, page } = props;
  // Review is on its own page; here the advertiser's own lifecycle actions.
  const actionsOf = (campaign: CampaignRow) =>
    allowedActions(campaign.status).filter((action) => action !== 'approve' && action !== 'reject');
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
      <DataTable
        label="Campaigns"
        count={campaigns.length}
        noun={['One campaign', 'campaigns']}
        empty={
          props.operator
            ? 'No campaigns yet. Advertisers create them after signing in, or import them with placard campaigns import.'
            : 'No campaigns yet. Create one with New campaign: it waits here as a draft until you submit it for review.'
        }
        headers={[
          'Campaign',
          props.operator && 'Advertiser',
          'Status',
          'Placements',
          'Flight',
          props.canChange && 'Actions',
        ]}
      >
        {campaigns.map((campaign) => (
          <tr key={campaign.id}>
            <td>
              <a href={`/campaigns/${campaign.id}`}>{campaign.title}</a>
              <p class="note">#{campaign.id}</p>
            </td>
            {props.operator && <td>{campaign.advertiserName}</td>}
            <td>
              <Status campaign={campaign} />
            </td>
            <td>{campaign.placements.join(', ')}</td>
            <td>{flight(campaign.startAt, campaign.endAt, campaign.timeZone)}</td>
            {props.canChange && (
              <td>
                <Actions campaign={campaign} csrf={page.csrf} actions={actionsOf(campaign)} />
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </Layout>
  );
}

/** The operator's review queue: each campaign waiting for review, to approve or reject with a reason. */
/** A field's value as a reviewer reads it. */
function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none (every one)' : value.join(', ');
  if (typeof value === 'object')
    return (
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ') || 'none'
    );
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** What changed since the operator last approved the campaign, or that this is its first review. */
function Changes({ changes }: { changes: FieldChange[] | null | undefined }) {
  if (changes === null || changes === undefined)
    return <p class="note">First review: it was never approved.</p>;
  if (changes.length === 0) return <p class="note">Nothing changed since its last approval.</p>;
  return (
    <>
      <h3>Changed since its last approval</h3>
      <ul class="changes">
        {changes.map((change) => (
          <li key={change.field}>
            <strong>{change.field}</strong>: {shown(change.approved)} → {shown(change.now)}
          </li>
        ))}
      </ul>
    </>
  );
}

export function ReviewPage(props: {
  page: PageContext;
  campaigns: CampaignRow[];
  /** Per campaign, what changed since its last approval (null: never approved). */
  changes: Map<number, FieldChange[] | null>;
  problem?: string;
}) {
  const { page } = props;
  return (
    <Layout title="Review queue" page={page} current="/review">
      <Problem message={props.problem} />
      {props.campaigns.length === 0 ? (
        <p class="empty">Nothing to review: campaigns appear here when an advertiser submits them.</p>
      ) : (
        <ul class="cards">
          {props.campaigns.map((campaign) => (
            <li key={campaign.id} class="card">
              <h2>{campaign.title}</h2>
              <Changes changes={props.changes.get(campaign.id)} />
              <dl>
                <dt>Advertiser</dt>
                <dd>{campaign.advertiserName}</dd>
                <dt>Destination</dt>
                <dd class="mono">{campaign.destinationUrl}</dd>
                <dt>Placements</dt>
                <dd>{campaign.placements.join(', ')}</dd>
                <dt>Countries</dt>
                <dd>{campaign.countries.length > 0 ? campaign.countries.join(', ') : 'all'}</dd>
                <dt>Devices</dt>
                <dd>{campaign.devices.length > 0 ? campaign.devices.join(', ') : 'all'}</dd>
              </dl>
              <div class="actions">
                <form method="post" action={`/campaigns/${campaign.id}/approve`}>
                  <CsrfField token={page.csrf} />
                  <button type="submit" aria-label={`Approve: ${campaign.title}`}>
                    Approve
                  </button>
                </form>
                <form method="post" action={`/campaigns/${campaign.id}/reject`} class="inline">
                  <CsrfField token={page.csrf} />
                  <label for={`reason-${campaign.id}`}>Reason</label>
                  <input id={`reason-${campaign.id}`} name="reason" required maxLength={500} />
                  <button type="submit" class="danger" aria-label={`Reject: ${campaign.title}`}>
                    Reject
                  </button>
                </form>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}
