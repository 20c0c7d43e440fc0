import type { Caps } from '../../../domain/campaigns.js';
import { budgetText, readBudget } from '../../../domain/campaigns.js';
import { readFrequencyCaps } from '../../../domain/frequency-caps.js';
import { priceOf, priceText } from '../../../domain/prices.js';
import { readSchedule, scheduleText } from '../../../domain/schedules.js';
import type { FieldChange } from '../../../services/campaign-review.js';
import type { CampaignRow } from './campaigns.js';
import { flight, frequencyCapsText, whenIn } from './format.js';
import { FieldMessage, invalidAttributes, wordProblems } from './form-problems.js';
import { CsrfField, Layout, Problem, type PageContext, type Refused } from './layout.js';
import { PagedList, typed, type Paging } from './parts.js';

/** How the reviewer reads each field a change may touch. */
const FIELD_LABELS: Record<FieldChange['field'], string> = {
  title: 'Title',
  description: 'Description',
  category: 'Category',
  destinationUrl: 'Click-through URL',
  priority: 'Priority',
  weight: 'Weight',
  placements: 'Placements',
  countries: 'Countries',
  devices: 'Devices',
  startAt: 'Start',
  endAt: 'End',
  timeZone: 'Time zone',
  caps: 'Caps',
  pacing: 'Pacing',
  frequencyCaps: 'Frequency caps',
  schedule: 'Hours of the week',
  price: 'Price',
  budget: 'Budget',
};

const list = (items: readonly string[], every: string): string =>
  items.length === 0 ? every : items.join(', ');

const capOf = (cap: number | null | undefined): string =>
  cap === null || cap === undefined ? 'no' : String(cap);

/** A campaign's caps in words: each kind of event, per local day and over its whole flight. */
export function capsText(caps: Partial<Caps>): string {
  if (Object.values(caps).every((cap) => cap === null || cap === undefined)) return 'none';
  return (
    `${capOf(caps.impressionsDaily)} impressions and ${capOf(caps.clicksDaily)} clicks a day; ` +
    `${capOf(caps.impressionsTotal)} impressions and ${capOf(caps.clicksTotal)} clicks in total`
  );
}

const pacingText = (pacing: unknown): string =>
  pacing === 'even' ? 'evenly over each cap’s period' : 'as fast as possible';

/**
 * A field's value, approved or current, as the reviewer reads it: times on the wall clock of the
 * campaign's time zone (`timeZone`), empty lists as what they mean (every country, every device).
 */
export function fieldText(
  field: FieldChange['field'],
  value: unknown,
  timeZone: string,
  currency: string,
): string {
  switch (field) {
    case 'price': {
      const { model, amountMicros } = (value ?? {}) as Record<string, unknown>;
      return priceText(
        priceOf(
          typeof model === 'string' ? model : null,
          typeof amountMicros === 'number' ? amountMicros : null,
        ),
        currency,
      );
    }
    case 'budget':
      return budgetText(readBudget(value, 'budget', []), currency);
    case 'startAt':
    case 'endAt':
      if (typeof value !== 'string') return field === 'startAt' ? 'no start' : 'no end';
      return whenIn(Date.parse(value), timeZone);
    case 'placements':
    case 'countries':
    case 'devices':
      return list(
        Array.isArray(value) ? value.map(String) : [],
        field === 'countries' ? 'every country' : field === 'devices' ? 'every device' : 'none',
      );
    case 'caps':
      return capsText(typeof value === 'object' && value !== null ? value : {});
    case 'pacing':
      return pacingText(value);
    case 'frequencyCaps':
      return frequencyCapsText(readFrequencyCaps(value, 'frequencyCaps', []));
    case 'schedule':
      return scheduleText(readSchedule(value, 'schedule', []));
    default:
      // The other fields are text or numbers (title, category, priority, weight, time zone).
      if (typeof value === 'string') return value === '' ? 'none' : value;
      return typeof value === 'number' ? String(value) : 'none';
  }
}

/** What changed since the operator last approved the campaign, or that it was never approved. */
function Changes(props: {
  campaign: CampaignRow;
  changes: FieldChange[] | null | undefined;
  currency: string;
}) {
  const { campaign, changes, currency } = props;
  const headingId = `changes-${campaign.id}`;
  if (changes === null || changes === undefined)
    return <p class="note review-new">New campaign, never approved.</p>;
  if (changes.length === 0) return <p class="note">Nothing changed since its last approval.</p>;
  return (
    <section aria-labelledby={headingId}>
      <h3 id={headingId}>Changed since its last approval</h3>
      <ul class="changes">
        {changes.map((change) => (
          <li key={change.field}>
            <strong>{FIELD_LABELS[change.field]}</strong>:{' '}
            <del>{fieldText(change.field, change.approved, campaign.timeZone, currency)}</del> →{' '}
            <ins>{fieldText(change.field, change.now, campaign.timeZone, currency)}</ins>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The ad as a partner's page renders it from the fetch answer: a label, the title, the description
 * and the link. The click-through URL is text here, never a link: the reviewer reads where it goes
 * without going there.
 */
function AdPreview({ campaign }: { campaign: CampaignRow }) {
  return (
    <div class="ad-preview" role="group" aria-label={`How a partner shows ${campaign.title}`}>
      <p class="ad-label">Sponsored</p>
      <p class="ad-title">{campaign.title}</p>
      {campaign.description !== null && <p>{campaign.description}</p>}
      <p class="mono ad-url">{campaign.destinationUrl}</p>
    </div>
  );
}

/** Everything about the campaign that decides where, when and how much it is served. */
function Facts({ campaign }: { campaign: CampaignRow }) {
  return (
    <dl>
      <dt>Advertiser</dt>
      <dd>
        {campaign.advertiserName} <span class="note">#{campaign.advertiserId}</span>
      </dd>
      <dt>Campaign</dt>
      <dd>#{campaign.id}</dd>
      <dt>Description</dt>
      <dd>{campaign.description ?? 'none'}</dd>
      <dt>Category</dt>
      <dd>{campaign.category ?? 'none'}</dd>
      <dt>Click-through URL</dt>
      <dd class="mono">{campaign.destinationUrl}</dd>
      <dt>Placements</dt>
      <dd>{list(campaign.placements, 'none')}</dd>
      <dt>Countries</dt>
      <dd>{list(campaign.countries, 'every country')}</dd>
      <dt>Devices</dt>
      <dd>{list(campaign.devices, 'every device')}</dd>
      <dt>Flight</dt>
      <dd>{flight(campaign.startAt, campaign.endAt, campaign.timeZone)}</dd>
      <dt>Caps</dt>
      <dd>{capsText(campaign.caps)}</dd>
      <dt>Pacing</dt>
      <dd>{pacingText(campaign.pacing)}</dd>
      <dt>Frequency caps</dt>
      <dd>{frequencyCapsText(campaign.frequencyCaps)}</dd>
      <dt>Hours of the week</dt>
      <dd>{scheduleText(campaign.schedule)}</dd>
      <dt>Priority, weight</dt>
      <dd>
        {campaign.priority}, {campaign.weight}
      </dd>
    </dl>
  );
}

/**
 * The operator's review queue: each campaign waiting for review shown whole, as partners would show
 * it and with everything that decides its delivery, with what changed since its last approval; to
 * approve, or reject with a reason.
 */
export function ReviewPage(props: {
  page: PageContext;
  campaigns: CampaignRow[];
  paging: Paging;
  /** Per campaign, what changed since its last approval (null: never approved). */
  changes: Map<number, FieldChange[] | null>;
  /** The deployment's currency, which prices are shown in. */
  currency: string;
  problem?: string;
  /** A reject form just refused: its reason as typed, and what is wrong with it beside it. */
  refused?: Refused;
}) {
  const { page } = props;
  return (
    <Layout title="Review queue" page={page} current="/review">
      <Problem message={props.problem} />
      {props.campaigns.length === 0 ? (
        <p class="empty">Nothing to review: campaigns appear here when an advertiser submits them.</p>
      ) : (
        <PagedList label="Campaigns to review" noun="campaigns to review" paging={props.paging}>
          <ul class="cards">
            {props.campaigns.map((campaign) => (
              <li key={campaign.id} class="card">
                <h2>{campaign.title}</h2>
                <Changes
                  campaign={campaign}
                  changes={props.changes.get(campaign.id)}
                  currency={props.currency}
                />
                <div class="review-body">
                  <div>
                    <h3>How a partner shows it</h3>
                    <AdPreview campaign={campaign} />
                  </div>
                  <div>
                    <h3>Delivery</h3>
                    <Facts campaign={campaign} />
                  </div>
                </div>
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
                    <RejectReason campaignId={campaign.id} refused={props.refused} />
                    <button type="submit" class="danger" aria-label={`Reject: ${campaign.title}`}>
                      Reject
                    </button>
                  </form>
                </div>
              </li>
            ))}
          </ul>
        </PagedList>
      )}
    </Layout>
  );
}

/** The reason to reject a campaign: as typed, with what is wrong with it, when the form was refused. */
function RejectReason(props: { campaignId: number; refused: Refused | undefined }) {
  const { campaignId, refused } = props;
  const action = `/campaigns/${campaignId}/reject`;
  const id = `reason-${campaignId}`;
  const message =
    refused?.action === action
      ? (wordProblems(refused.problem, refused.problems).fields.get('reason') ?? refused.problem)
      : undefined;
  return (
    <>
      <input
        id={id}
        name="reason"
        required
        maxLength={500}
        value={typed(refused, action, 'reason')}
        {...invalidAttributes(id, message)}
      />
      <FieldMessage fieldId={id} message={message} />
    </>
  );
}
