import { MAX_FREQUENCY_CAP } from '../../../domain/frequency-caps.js';
import {
  DEFAULT_PRIORITY,
  DEFAULT_WEIGHT,
  MAX_PRIORITY,
  MAX_WEIGHT,
  MIN_PRIORITY,
  type Campaign,
} from '../../../domain/campaigns.js';
import { DEVICES } from '../../../domain/targeting.js';
import { scheduleText, WEEKDAYS, type Weekday } from '../../../domain/schedules.js';
import { currencyDecimals, formatMoneyWithCode } from '../../../domain/money.js';
import { PRICE_MODEL_LABELS, formatPriceAmount, priceText } from '../../../domain/prices.js';
import type { CampaignPriceRecord } from '../../../store/store.js';
import type { CampaignBudgetSpend } from '../../../services/campaigns.js';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { FieldProblem } from '../../../domain/errors.js';
import { FieldMessage, invalidAttributes, ProblemSummary, wordProblems } from './form-problems.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { flight, frequencyCapsText, whenIn } from './format.js';
import { BudgetTable, DataTable } from './parts.js';

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
  /** Frequency caps per viewer (D20): impressions per rolling hour, day and week; empty for none. */
  frequencyHour?: string;
  frequencyDay?: string;
  frequencyWeek?: string;
  /** Dayparting: each weekday's hour ranges as typed (`9-17, 19-22`); every day empty: every hour. */
  scheduleMon?: string;
  scheduleTue?: string;
  scheduleWed?: string;
  scheduleThu?: string;
  scheduleFri?: string;
  scheduleSat?: string;
  scheduleSun?: string;
  /** The operator's fields: whose campaign a new one is, and its place in delivery order. */
  advertiserId?: string;
  priority?: string;
  weight?: string;
  /** The operator's: `cpm`, `cpc`, `flat`, or empty for none; the amount in units of the currency. */
  priceModel?: string;
  priceAmount?: string;
  /** Spend budgets in units of the currency; empty for none (anyone who may edit sets them). */
  budgetTotal?: string;
  budgetDaily?: string;
}

/** What only the operator's people are given in the form (D13): advertisers never see these inputs. */
export interface OperatorFormFields {
  /** For a new campaign: the advertisers to choose from (an edit keeps its advertiser). */
  advertisers?: Array<{ id: number; name: string }>;
  /** How many advertisers a list may hold: a full list may leave some out, so the id is typed. */
  advertiserChoices?: number;
}

/** How each price model reads in the form's choice (D18). */
const PRICE_CHOICES: ReadonlyArray<[string, string]> = [
  ['', 'None: a house campaign, free'],
  ['cpm', 'CPM: per thousand billable impressions'],
  ['cpc', 'CPC: per billable click'],
  ['flat', 'Flat: a fixed amount for the flight'],
];

/** How each pacing reads in the form (D16). */
const PACING_CHOICES = [
  ['asap', 'As fast as possible: served whenever it is drawn, until a cap or budget is reached'],
  [
    'even',
    'Evenly: each cap and budget spread over its day (or its flight, for a total one with an end), following the traffic expected',
  ],
] as const;

/** Each field's label, which the problems with it speak too ("Ends must be after Starts"). */
const LABELS: Record<keyof CampaignFormValues, string> = {
  title: 'Title',
  description: 'Description',
  category: 'Category',
  destinationUrl: 'Destination URL',
  placements: 'Placements',
  countries: 'Countries',
  devices: 'Devices',
  timeZone: 'Time zone',
  startAt: 'Starts',
  endAt: 'Ends',
  impressionsDaily: 'Daily impression cap',
  clicksDaily: 'Daily click cap',
  impressionsTotal: 'Total impression cap',
  clicksTotal: 'Total click cap',
  pacing: 'Pacing',
  frequencyHour: 'Per viewer per hour',
  frequencyDay: 'Per viewer per day',
  frequencyWeek: 'Per viewer per week',
  scheduleMon: 'Monday',
  scheduleTue: 'Tuesday',
  scheduleWed: 'Wednesday',
  scheduleThu: 'Thursday',
  scheduleFri: 'Friday',
  scheduleSat: 'Saturday',
  scheduleSun: 'Sunday',
  advertiserId: 'Advertiser',
  priority: 'Priority',
  weight: 'Weight',
  priceModel: 'Price model',
  priceAmount: 'Price amount',
  budgetTotal: 'Total budget',
  budgetDaily: 'Daily budget',
};

/** The problems the service found with a refused form, by field, in the form's words. */
const FieldProblems = createContext<ReadonlyMap<string, string>>(new Map());

function Field(props: {
  name: keyof CampaignFormValues;
  values: CampaignFormValues;
  hint?: string;
  type?: 'text' | 'url' | 'number' | 'datetime-local';
  required?: boolean;
  min?: number;
  max?: number;
}) {
  const value = props.values[props.name];
  const problem = useContext(FieldProblems).get(props.name);
  return (
    <>
      <label for={props.name}>{LABELS[props.name]}</label>
      <input
        id={props.name}
        name={props.name}
        // Preact's types tell input types apart by their other attributes; this component sets the same ones for all.
        {...({ type: props.type ?? 'text' } as Record<string, string>)}
        value={typeof value === 'string' ? value : ''}
        required={props.required}
        min={props.min}
        max={props.max}
        {...invalidAttributes(props.name, problem, props.hint ? `${props.name}-hint` : undefined)}
      />
      <FieldMessage fieldId={props.name} message={problem} />
      {props.hint && (
        <p class="hint" id={`${props.name}-hint`}>
          {props.hint}
        </p>
      )}
    </>
  );
}

/**
 * A whole-number field: a cap, or priority and weight with their `range` and the value a new
 * campaign starts with (`start`, shown while the form has none).
 */
function NumberField(props: {
  name: keyof CampaignFormValues;
  values: CampaignFormValues;
  hint: string;
  range?: [number, number];
  start?: number;
}) {
  const { name, range, start } = props;
  const values = start === undefined ? props.values : { [name]: String(start), ...props.values };
  return (
    <Field name={name} type="number" min={range?.[0]} max={range?.[1]} values={values} hint={props.hint} />
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
  /** Present for the operator's people only: the advertiser choice, priority, weight and price. */
  operator?: OperatorFormFields;
  /** The deployment's currency, which the price is in. */
  currency: string;
  /** The price the campaign has, shown (not editable) to anyone who may not set it. */
  price: Campaign['price'];
  /** Whether an advertiser's person may set the price: the operator allows its advertiser (D18). */
  canPrice?: boolean;
  problem?: string;
  /** The problems the service found with each field of a refused form. */
  problems?: readonly FieldProblem[];
}) {
  const { values } = props;
  const checked = (list: string[] | undefined, item: string) => list?.includes(item) ?? false;
  const worded =
    props.problem === undefined ? undefined : wordProblems(props.problem, props.problems, LABELS);
  const problems = worded?.fields ?? new Map<string, string>();
  /** A group of choices with a problem names it, below its legend. */
  const group = (name: keyof CampaignFormValues) => ({
    id: name,
    'aria-describedby': problems.has(name) ? `${name}-problem` : undefined,
  });
  return (
    <Layout title={props.title} page={props.page} current="/campaigns">
      <ProblemSummary worded={worded} idOf={(name) => name} />
      {props.note && <p class="note">{props.note}</p>}
      <FieldProblems.Provider value={problems}>
        <form method="post" action={props.action} class="stack wide">
          <CsrfField token={props.page.csrf} />
          {props.operator?.advertisers && (
            <AdvertiserChoice
              advertisers={props.operator.advertisers}
              complete={props.operator.advertisers.length < (props.operator.advertiserChoices ?? Infinity)}
              values={values}
            />
          )}
          <Field name="title" values={values} required />
          <Field name="description" values={values} hint="Optional: one or two sentences." />
          <Field name="category" values={values} hint="Optional: a lower-case word such as travel." />
          <Field name="destinationUrl" type="url" values={values} required />
          <fieldset {...group('placements')}>
            <legend>Placements</legend>
            <FieldMessage fieldId="placements" message={problems.get('placements')} />
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
            values={values}
            hint="Two-letter codes separated by commas, such as US, CA; empty for every country."
          />
          <fieldset {...group('devices')}>
            <legend>Devices (none checked: every device)</legend>
            <FieldMessage fieldId="devices" message={problems.get('devices')} />
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
            values={{ timeZone: 'UTC', ...values }}
            hint="An IANA time zone such as Europe/Paris: flight times and daily caps follow it."
          />
          <Field
            name="startAt"
            type="datetime-local"
            values={values}
            hint="Optional: local time in the campaign's time zone."
          />
          <Field name="endAt" type="datetime-local" values={values} hint="Optional." />
          <NumberField name="impressionsDaily" values={values} hint="Optional: counted per local day." />
          <NumberField name="clicksDaily" values={values} hint="Optional." />
          <NumberField
            name="impressionsTotal"
            values={values}
            hint="Optional: over the whole flight; reaching it completes the campaign."
          />
          <NumberField name="clicksTotal" values={values} hint="Optional." />
          <fieldset {...group('pacing')}>
            <legend>Pacing of the caps</legend>
            <FieldMessage fieldId="pacing" message={problems.get('pacing')} />
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
          <FrequencyCapFields values={values} />
          <ScheduleFields values={values} />
          <BudgetFields values={values} currency={props.currency} />
          {props.operator && <DeliveryOrder values={values} />}
          {props.operator ? (
            <PriceFields values={values} currency={props.currency} legend="Price (the operator’s)" />
          ) : props.canPrice ? (
            <PriceFields values={values} currency={props.currency} legend="Price" />
          ) : (
            <p>
              Price: {priceText(props.price, props.currency)} <span class="hint">(set by the operator)</span>
            </p>
          )}
          <button type="submit">{props.submitLabel}</button>
        </form>
      </FieldProblems.Provider>
    </Layout>
  );
}

/**
 * The advertiser a new campaign is for, chosen by the operator among every advertiser, or typed as
 * its id when there are too many to list.
 */
function AdvertiserChoice(props: {
  advertisers: Array<{ id: number; name: string }>;
  complete: boolean;
  values: CampaignFormValues;
}) {
  if (!props.complete)
    return (
      <Field
        name="advertiserId"
        values={props.values}
        required
        hint="The advertiser's number, as the Advertisers page lists it."
      />
    );
  const chosen = props.values.advertiserId;
  return (
    <>
      <label for="advertiserId">Advertiser</label>
      <select id="advertiserId" name="advertiserId" required>
        <option value="">Choose an advertiser</option>
        {props.advertisers.map((advertiser) => (
          <option
            key={advertiser.id}
            value={String(advertiser.id)}
            selected={chosen === String(advertiser.id)}
          >
            {advertiser.name} (#{advertiser.id})
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * Priority and weight (the operator's alone): which campaign a fetch returns first, and how often
 * among equals. Changing them never sends a campaign back to review.
 */
function DeliveryOrder({ values }: { values: CampaignFormValues }) {
  return (
    <fieldset>
      <legend>Delivery order (the operator’s)</legend>
      <NumberField
        name="priority"
        range={[MIN_PRIORITY, MAX_PRIORITY]}
        start={DEFAULT_PRIORITY}
        values={values}
        hint={`From ${MIN_PRIORITY} to ${MAX_PRIORITY}: a fetch returns the highest priority first. Does not send the campaign to review.`}
      />
      <NumberField
        name="weight"
        range={[1, MAX_WEIGHT]}
        start={DEFAULT_WEIGHT}
        values={values}
        hint="Among campaigns of one priority, how often this one is drawn relative to the others."
      />
    </fieldset>
  );
}

/**
 * The price (D18): its model, and its amount in units of the currency with the currency's decimals,
 * read exactly. The operator's, and the advertiser's own people's where the operator allows it.
 * Changing it never sends a campaign back to review.
 */
function PriceFields(props: { values: CampaignFormValues; currency: string; legend: string }) {
  const { values, currency } = props;
  const problem = useContext(FieldProblems).get('priceModel');
  const decimals = currencyDecimals(currency);
  const example = (2.5).toFixed(decimals);
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <label for="priceModel">{LABELS.priceModel}</label>
      <select id="priceModel" name="priceModel" {...invalidAttributes('priceModel', problem)}>
        {PRICE_CHOICES.map(([model, label]) => (
          <option key={model} value={model} selected={(values.priceModel ?? '') === model}>
            {label}
          </option>
        ))}
      </select>
      <FieldMessage fieldId="priceModel" message={problem} />
      <Field
        name="priceAmount"
        values={values}
        hint={`In ${currency}, such as ${example} (per thousand impressions for a CPM). Applies to events from now on; does not send the campaign to review.`}
      />
    </fieldset>
  );
}

/**
 * Spend budgets (D18), in units of the currency, each optional: set by the operator or the
 * campaign's own advertiser, as a budget only limits what the advertiser spends; never sends the
 * campaign back to review.
 */
/** Frequency caps per viewer (D20), with what they need to apply: the partner's `viewer`. */
function FrequencyCapFields({ values }: { values: CampaignFormValues }) {
  const range: [number, number] = [1, MAX_FREQUENCY_CAP];
  return (
    <fieldset>
      <legend>Frequency caps</legend>
      <p class="hint">
        At most so many impressions per person, counted only when the partner names the viewer (its own id for
        the user). Without one, no frequency cap applies. Empty for none.
      </p>
      <NumberField name="frequencyHour" values={values} range={range} hint="In any 60 minutes." />
      <NumberField name="frequencyDay" values={values} range={range} hint="In any 24 hours." />
      <NumberField name="frequencyWeek" values={values} range={range} hint="In any 7 days." />
    </fieldset>
  );
}

/** The form's field of each weekday's hours (dayparting), Monday first. */
export const SCHEDULE_FIELDS = {
  mon: 'scheduleMon',
  tue: 'scheduleTue',
  wed: 'scheduleWed',
  thu: 'scheduleThu',
  fri: 'scheduleFri',
  sat: 'scheduleSat',
  sun: 'scheduleSun',
} as const satisfies Record<Weekday, keyof CampaignFormValues>;

/**
 * The hours of the week it may run: one field per weekday, hour ranges typed as people say them
 * (`9-17, 19-22`), which a keyboard and a phone's keypad both enter quickly; every day empty: every hour.
 */
function ScheduleFields({ values }: { values: CampaignFormValues }) {
  return (
    <fieldset class="schedule" aria-describedby="schedule-hint">
      <legend>Hours of the week</legend>
      <p class="hint" id="schedule-hint">
        When it may run, in its time zone: for each day, hour ranges from the hour it starts to the hour it
        stops, such as 9-17 (9:00 to 17:00) or 0-6, 22-24. A day left empty: not that day. Every day empty:
        every hour. An hour that daylight saving skips is not run; a repeated hour is run both times.
      </p>
      <div class="schedule-days">
        {WEEKDAYS.map((day) => (
          <div key={day}>
            <Field name={SCHEDULE_FIELDS[day]} values={values} />
          </div>
        ))}
      </div>
    </fieldset>
  );
}

function BudgetFields({ values, currency }: { values: CampaignFormValues; currency: string }) {
  const example = (500).toFixed(currencyDecimals(currency));
  return (
    <fieldset>
      <legend>Budget</legend>
      <Field
        name="budgetTotal"
        values={values}
        hint={`In ${currency}, such as ${example}: what its billable events may cost in all. Empty for none.`}
      />
      <Field
        name="budgetDaily"
        values={values}
        hint={`In ${currency}: what they may cost per day in its time zone. Empty for none.`}
      />
    </fieldset>
  );
}

/**
 * Who sets a campaign's price, as its page shows it (D18): `you`, with the form's values (as typed
 * when it was just refused); `operator` for an advertiser's people it does not allow; `reader` for
 * someone who may not change anything.
 */
export type CampaignPricing =
  | {
      by: 'you';
      values: CampaignFormValues;
      problem?: string;
      problems?: readonly FieldProblem[];
    }
  | { by: 'operator' | 'reader' };

/**
 * The price alone, on the campaign's page, for whoever may set it: the edit form's price fields,
 * with a summary of their problems when refused. Applies from then on, as anywhere else.
 */
function PriceForm(props: {
  action: string;
  csrf: string;
  currency: string;
  values: CampaignFormValues;
  problem?: string;
  problems?: readonly FieldProblem[];
}) {
  const worded =
    props.problem === undefined ? undefined : wordProblems(props.problem, props.problems, LABELS);
  return (
    <>
      <h2>Set the price</h2>
      <ProblemSummary worded={worded} idOf={(name) => name} />
      <FieldProblems.Provider value={worded?.fields ?? new Map<string, string>()}>
        <form method="post" action={props.action} class="stack">
          <CsrfField token={props.csrf} />
          <PriceFields values={props.values} currency={props.currency} legend="Price" />
          <button type="submit">Set the price</button>
        </form>
      </FieldProblems.Provider>
    </>
  );
}

/** A campaign's prices, newest (the one in force) first, with what was billed at each. */
function PriceHistory(props: { prices: readonly CampaignPriceRecord[]; currency: string; timeZone: string }) {
  const { prices, currency } = props;
  return (
    <DataTable
      label="Price history"
      count={prices.length}
      noun={['One price', 'prices']}
      empty="No price yet: a house campaign, whose events cost nothing."
      headers={['Since', 'Model', 'Amount', 'Set by', 'Units billed', 'Spend']}
    >
      {prices.map((entry) => (
        <tr key={entry.since}>
          <td>{whenIn(entry.since, props.timeZone)}</td>
          <td>{entry.price === null ? 'None' : PRICE_MODEL_LABELS[entry.price.model]}</td>
          <td class="money">
            {entry.price === null
              ? ''
              : `${currency} ${formatPriceAmount(entry.price.amountMicros, currency)}`}
          </td>
          <td>{entry.setBy}</td>
          <td>{entry.billedUnits.toLocaleString('en-US')}</td>
          <td class="money">{formatMoneyWithCode(entry.spendMicros, currency)}</td>
        </tr>
      ))}
    </DataTable>
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
  /** The deployment's currency, which the price is in. */
  currency: string;
  /** Every price the campaign has had, newest first. */
  prices: readonly CampaignPriceRecord[];
  /** Who sets its price: this person (its form, as typed when refused) or, read only, the operator. */
  pricing: CampaignPricing;
  /** A form of the page refused where the page has no form to show it by (a price not allowed). */
  problem?: string;
  /** What it spent against its budgets, and when each runs out at the current pace. */
  spend: CampaignBudgetSpend;
}) {
  const { campaign } = props;
  const partnerView: Record<string, unknown> = { id: campaign.id, title: campaign.title };
  if (campaign.description !== null) partnerView['description'] = campaign.description;
  if (campaign.category !== null) partnerView['category'] = campaign.category;
  partnerView['destinationUrl'] = campaign.destinationUrl;
  const caps = campaign.caps;
  return (
    <Layout title={`Preview: ${campaign.title}`} page={props.page} current="/campaigns">
      <Problem message={props.problem} />
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
        <p class="mono ad-url">{campaign.destinationUrl}</p>
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
        <dt>Frequency caps</dt>
        <dd>
          {frequencyCapsText(campaign.frequencyCaps)}
          {campaign.frequencyCaps.length > 0 && (
            <p class="hint">
              Counted only when the partner names the viewer; without one, no frequency cap applies.
            </p>
          )}
        </dd>
        <dt>Hours of the week</dt>
        <dd>{scheduleText(campaign.schedule)}</dd>
        <dt>Pacing</dt>
        <dd>
          {campaign.pacing === 'even'
            ? 'even: spread over each cap’s and budget’s period'
            : 'as fast as possible'}
        </dd>
        <dt>Price</dt>
        <dd>
          {priceText(campaign.price, props.currency)}
          {props.pricing.by === 'operator' && <p class="hint">The operator sets this campaign’s price.</p>}
        </dd>
      </dl>
      {props.pricing.by === 'you' && (
        <PriceForm
          action={`/campaigns/${campaign.id}/price`}
          csrf={props.page.csrf}
          currency={props.currency}
          values={props.pricing.values}
          problem={props.pricing.problem}
          problems={props.pricing.problems}
        />
      )}
      <h2>Budget</h2>
      <BudgetTable
        label="Budget"
        currency={props.currency}
        timeZone={campaign.timeZone}
        rows={[
          {
            label: 'Total',
            budget: campaign.budget.totalMicros,
            spent: props.spend.totalMicros,
            forecast: props.spend.forecast.total,
          },
          {
            label: `Daily (${props.spend.day})`,
            budget: campaign.budget.dailyMicros,
            spent: props.spend.dayMicros,
            forecast: props.spend.forecast.daily,
          },
        ]}
      />
      <h2>Price history</h2>
      <PriceHistory prices={props.prices} currency={props.currency} timeZone={campaign.timeZone} />
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
