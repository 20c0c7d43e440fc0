import type { Campaign } from '../../../domain/campaigns.js';
import { DEVICES } from '../../../domain/targeting.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { flight } from './format.js';

/** What the form shows: the values typed so far (kept when the service refuses them). */
export interface CampaignFormValues {
  title?: string;
  description?: string;
  category?: string;
  destinationUrl?: string;
  placements?: string[];
  countries?: string;
  devices?: string[];
  startAt?: string;
  endAt?: string;
  timeZone?: string;
  impressionsDaily?: string;
  clicksDaily?: string;
  impressionsTotal?: string;
  clicksTotal?: string;
  pacing?: string;
}

/** How each pacing reads in the form (D16). */
const PACING_CHOICES = [
  ['asap', 'As fast as possible: served whenever it is drawn, until a cap is reached'],
  [
    'even',
    'Evenly: each cap spread over its day (or its flight, for a total cap with an end), following the traffic expected',
  ],
] as const;

function Field(props: {
  name: keyof CampaignFormValues;
  label: string;
  values: CampaignFormValues;
  hint?: string;
  type?: 'text' | 'url' | 'number' | 'datetime-local';
  required?: boolean;
}) {
  const value = props.values[props.name];
  return (
    <>
      <label for={props.name}>{props.label}</label>
      <input
        id={props.name}
        name={props.name}
        // Preact's types tell input types apart by their other attributes; this component sets the same ones for all.
        {...({ type: props.type ?? 'text' } as Record<string, string>)}
        value={typeof value === 'string' ? value : ''}
        required={props.required}
        aria-describedby={props.hint ? `${props.name}-hint` : undefined}
      />
      {props.hint && (
        <p class="hint" id={`${props.name}-hint`}>
          {props.hint}
        </p>
      )}
    </>
  );
}

/**
 * A campaign's fields: creative, targeting, flight in its time zone, caps. A new campaign starts as
 * a draft; an edit says what it does to the campaign's review.
 */
export function CampaignFormPage(props: {
  page: PageContext;
  title: string;
  action: string;
  submitLabel: string;
  /** What saving does beyond saving (an edit of an approved campaign's creative goes to review). */
  note?: string;
  placements: Array<{ id: string; description: string }>;
  values: CampaignFormValues;
  problem?: string;
}) {
  const { values } = props;
  const checked = (list: string[] | undefined, item: string) => list?.includes(item) ?? false;
  return (
    <Layout title={props.title} page={props.page} current="/campaigns">
      <Problem message={props.problem} />
      {props.note && <p class="note">{props.note}</p>}
      <form method="post" action={props.action} class="stack wide">
        <CsrfField token={props.page.csrf} />
        <Field name="title" label="Title" values={values} required />
        <Field
          name="description"
          label="Description"
          values={values}
          hint="Optional: one or two sentences."
        />
        <Field
          name="category"
          label="Category"
          values={values}
          hint="Optional: a lower-case word such as travel."
        />
        <Field name="destinationUrl" label="Destination URL" type="url" values={values} required />
        <fieldset>
          <legend>Placements</legend>
          {props.placements.map((placement) => (
            <label class="choice" key={placement.id}>
              <input
                type="checkbox"
                name="placements"
                value={placement.id}
                checked={checked(values.placements, placement.id)}
              />{' '}
              {placement.id} <span class="hint">{placement.description}</span>
            </label>
          ))}
        </fieldset>
        <Field
          name="countries"
          label="Countries"
          values={values}
          hint="Two-letter codes separated by commas, such as US, CA; empty for every country."
        />
        <fieldset>
          <legend>Devices (none checked: every device)</legend>
          {DEVICES.map((device) => (
            <label class="choice" key={device}>
              <input
                type="checkbox"
                name="devices"
                value={device}
                checked={checked(values.devices, device)}
              />{' '}
              {device}
            </label>
          ))}
        </fieldset>
        <Field
          name="timeZone"
          label="Time zone"
          values={{ timeZone: 'UTC', ...values }}
          hint="An IANA time zone such as Europe/Paris: flight times and daily caps follow it."
        />
        <Field
          name="startAt"
          label="Starts"
          type="datetime-local"
          values={values}
          hint="Optional: local time in the campaign's time zone."
        />
        <Field name="endAt" label="Ends" type="datetime-local" values={values} hint="Optional." />
        <Field
          name="impressionsDaily"
          label="Daily impression cap"
          type="number"
          values={values}
          hint="Optional: counted per local day."
        />
        <Field name="clicksDaily" label="Daily click cap" type="number" values={values} hint="Optional." />
        <Field
          name="impressionsTotal"
          label="Total impression cap"
          type="number"
          values={values}
          hint="Optional: over the whole flight; reaching it completes the campaign."
        />
        <Field name="clicksTotal" label="Total click cap" type="number" values={values} hint="Optional." />
        <fieldset>
          <legend>Pacing of the caps</legend>
          {PACING_CHOICES.map(([pacing, label]) => (
            <label class="choice" key={pacing}>
              <input
                type="radio"
                name="pacing"
                value={pacing}
                checked={(values.pacing ?? 'asap') === pacing}
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        <button type="submit">{props.submitLabel}</button>
      </form>
    </Layout>
  );
}

/**
 * A campaign's own page: why it is or is not serving, how a partner's page would show it, its
 * delivery settings, the fields partners receive, and what the person may do next.
 */
export function CampaignPreviewPage(props: {
  page: PageContext;
  campaign: Campaign;
  canSubmit: boolean;
  canEdit: boolean;
  /** Why it is not served now, each with what to do; empty while it is served. */
  notServing: string[];
}) {
  const { campaign } = props;
  const partnerView: Record<string, unknown> = { id: campaign.id, title: campaign.title };
  if (campaign.description !== null) partnerView['description'] = campaign.description;
  if (campaign.category !== null) partnerView['category'] = campaign.category;
  partnerView['destinationUrl'] = campaign.destinationUrl;
  const caps = campaign.caps;
  return (
    <Layout title={`Preview: ${campaign.title}`} page={props.page} current="/campaigns">
      <p class="actions">
        <a href={`/reports?campaign=${campaign.id}&window=day&breakdown=placement`}>Live report</a>
        {props.canEdit && <a href={`/campaigns/${campaign.id}/edit`}>Edit</a>}
      </p>
      <h2>Is it serving?</h2>
      {props.notServing.length === 0 ? (
        <p>Yes: partners receive it for fetches that match its placements, countries and devices.</p>
      ) : (
        <ul class="reasons">
          {props.notServing.map((reason) => (
            <li key={reason}>{reason}</li>
          ))}
        </ul>
      )}
      <h2>How a partner shows it</h2>
      <div class="ad-preview">
        <p class="ad-label">Sponsored</p>
        <p class="ad-title">{campaign.title}</p>
        {campaign.description && <p>{campaign.description}</p>}
        <p class="mono">{campaign.destinationUrl}</p>
      </div>
      <h2>Delivery</h2>
      <dl>
        <dt>Status</dt>
        <dd>{campaign.status.replace('_', ' ')}</dd>
        <dt>Placements</dt>
        <dd>{campaign.placements.join(', ')}</dd>
        <dt>Countries</dt>
        <dd>{campaign.countries.length > 0 ? campaign.countries.join(', ') : 'every country'}</dd>
        <dt>Devices</dt>
        <dd>{campaign.devices.length > 0 ? campaign.devices.join(', ') : 'every device'}</dd>
        <dt>Flight</dt>
        <dd>{flight(campaign.startAt, campaign.endAt, campaign.timeZone)}</dd>
        <dt>Time zone</dt>
        <dd>{campaign.timeZone}</dd>
        <dt>Daily caps</dt>
        <dd>
          {caps.impressionsDaily ?? 'no'} impressions, {caps.clicksDaily ?? 'no'} clicks per local day
        </dd>
        <dt>Total caps</dt>
        <dd>
          {caps.impressionsTotal ?? 'no'} impressions, {caps.clicksTotal ?? 'no'} clicks
        </dd>
        <dt>Pacing</dt>
        <dd>{campaign.pacing === 'even' ? 'even: spread over each cap’s period' : 'as fast as possible'}</dd>
      </dl>
      <h2>What partners receive</h2>
      <pre class="mono" tabIndex={0} aria-label="The campaign as partners receive it">
        {JSON.stringify(partnerView, null, 2)}
      </pre>
      {props.canSubmit && campaign.status === 'draft' && (
        <form method="post" action={`/campaigns/${campaign.id}/submit`}>
          <CsrfField token={props.page.csrf} />
          <button type="submit">Submit for review</button>
        </form>
      )}
      <p>
        <a href="/campaigns">Back to the campaigns</a>
      </p>
    </Layout>
  );
}
