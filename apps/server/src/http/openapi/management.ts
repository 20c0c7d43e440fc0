import { Type, type TSchema } from 'typebox';
import { CAMPAIGN_STATUSES } from '../../domain/campaigns.js';
import { PACINGS } from '../../domain/pacing.js';
import { FREQUENCY_PERIODS, MAX_FREQUENCY_CAP } from '../../domain/frequency-caps.js';
import { WEEKDAYS } from '../../domain/schedules.js';
import { MAX_MICROS, MIN_MICROS } from '../../domain/money.js';
import { ADVERTISER_PRICING, PRICE_MODELS } from '../../domain/prices.js';
import { FLAG_SIGNALS, FLAG_STATUSES, KEY_SIGNALS } from '../../domain/key-flags.js';
import { MAX_LIMIT_SETTING } from '../../domain/rate-limits.js';
import { Instant, managementErrors, Nullable, NullableInstant } from './common.js';

/**
 * What the management API's routes (`/admin/v1`, in `admin/`, each with its request parts beside
 * its handler) share in the OpenAPI document: the records they answer, registered once as
 * components, the fields more than one route takes, and `operation`, which says the rest of a
 * route's schema. Validation stays in the domain layer (one set of rules and messages for the API
 * and the CLI), so these describe; a test checks real responses against them.
 */

/** A rate (per second) or burst: a whole number, as the server accepts them. */
const LimitSetting = Nullable(Type.Integer({ minimum: 1, maximum: MAX_LIMIT_SETTING }));

export const RateLimits = Type.Object({
  fetchRate: LimitSetting,
  fetchBurst: LimitSetting,
  eventsRate: LimitSetting,
  eventsBurst: LimitSetting,
});

/** The advertisers a partner never receives a campaign of, by id. */
export const BlockedAdvertisers = Type.Array(Type.Integer({ minimum: 1 }), {
  description: 'Ids of advertisers none of whose campaigns the partner is ever served.',
});

const Partner = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    blockedCategories: Type.Array(Type.String()),
    blockedAdvertisers: BlockedAdvertisers,
    createdAt: Instant,
    updatedAt: Instant,
  },
  { $id: 'Partner' },
);

const RevenueShare = Type.Object(
  {
    id: Type.Integer(),
    basisPoints: Type.Integer({
      minimum: 0,
      maximum: 10_000,
      description: 'Of each charged event’s cost; 7000 is 70%.',
    }),
    percent: Type.String({
      description: 'The same share as a percentage with two decimals, such as `70.00`.',
    }),
    effectiveFrom: Type.String({
      format: 'date-time',
      description:
        'The instant it takes effect: the start of `effectiveDate`, or when it was set for that day.',
    }),
    effectiveDate: Type.String({
      format: 'date',
      description:
        'The billing date it takes effect on, in the billing time zone (`PLACARD_BILLING_TIME_ZONE`).',
    }),
    setBy: Type.String({
      description: 'Who set it, as the audit log names actors (`admin:3`, `user:7`, `cli`).',
    }),
    createdAt: Instant,
  },
  { $id: 'RevenueShare' },
);

const ApiKey = Type.Object(
  {
    id: Type.Integer(),
    partnerId: Type.Integer(),
    label: Nullable(Type.String()),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it by.' }),
    status: Type.Union(
      [Type.Literal('active'), Type.Literal('suspended'), Type.Literal('expired'), Type.Literal('revoked')],
      { description: '`expired`: rotated out and past `expiresAt`; it answers 401 like a revoked key.' },
    ),
    createdAt: Instant,
    lastUsedAt: NullableInstant,
    browserRequests: Type.Integer({ description: 'Requests refused because they came from a browser.' }),
    lastBrowserRequestAt: NullableInstant,
    expiresAt: NullableInstant,
    revokedAt: NullableInstant,
    suspendedAt: NullableInstant,
    suspendedReason: Nullable(Type.String()),
    rateLimits: RateLimits,
  },
  { $id: 'ApiKey' },
);

export const NewApiKey = Type.Intersect([
  Type.Ref('ApiKey'),
  Type.Object({ key: Type.String({ description: 'The key itself: shown this once, never again.' }) }),
]);

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('manager'), Type.Literal('reporter')], {
  description:
    '`admin`: everything the account may do, its users included; `manager`: all but users; `reporter`: read only.',
});

const AdminToken = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    prefix: Type.String({ description: 'The first characters of the token, to recognise it by.' }),
    account: Type.String({
      description: 'What the token acts for: `operator` (everything), `advertiser:<id>` or `partner:<id>`.',
    }),
    role: Role,
    status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
    createdAt: Instant,
    lastUsedAt: Type.Union([Instant, Type.Null()], { description: 'Written at most once a minute.' }),
    expiresAt: NullableInstant,
    revokedAt: NullableInstant,
  },
  { $id: 'AdminToken' },
);

const Caps = Type.Object({
  impressionsTotal: Nullable(Type.Integer()),
  clicksTotal: Nullable(Type.Integer()),
  impressionsDaily: Nullable(Type.Integer()),
  clicksDaily: Nullable(Type.Integer()),
});

export const Status = Type.Union(CAMPAIGN_STATUSES.map((status) => Type.Literal(status)));

const Pacing = Type.Union(
  PACINGS.map((pacing) => Type.Literal(pacing)),
  {
    description:
      'How the caps and spend budgets are spent (D16, D18): `asap` (default) as fast as the campaign is drawn; `even` spread over each cap’s and budget’s period (the local day, or the flight for a total one) in proportion to the traffic expected, so a cap or budget is reached near the period’s end; a budget is planned in whole micros and paced only at a `cpm` or `cpc` price. `even` needs a daily cap or budget, or a total cap or budget and an `endAt`.',
  },
);

const FrequencyCaps = Type.Array(
  Type.Object(
    {
      impressions: Type.Integer({ minimum: 1, maximum: MAX_FREQUENCY_CAP }),
      per: Type.Union(FREQUENCY_PERIODS.map((period) => Type.Literal(period))),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: FREQUENCY_PERIODS.length,
    description:
      'At most `impressions` billable impressions per viewer in any rolling hour, day (24 hours) or week (7 days), one cap per period (D20). Applies only to events and fetches that carry the partner’s `viewer`: without it no frequency cap applies. An impression past a cap is stored `past frequency cap`, answered 200 and not billed; fetch leaves the campaign out for that viewer. Empty (or null on a write): none.',
    examples: [[{ impressions: 3, per: 'day' }]],
  },
);

const HourRange = Type.Array(Type.Integer({ minimum: 0, maximum: 24 }), {
  minItems: 2,
  maxItems: 2,
  description:
    '`[from, to]`: from the start of hour `from` (0 to 23) to the start of hour `to` (1 to 24; 24 is midnight), `from < to`.',
});

const Schedule = Nullable(
  Type.Object(Object.fromEntries(WEEKDAYS.map((day) => [day, Type.Optional(Type.Array(HourRange))])), {
    additionalProperties: false,
    description:
      'Dayparting: the hours of the week the campaign may run, in its `timeZone`: for each weekday it runs on (`mon` to `sun`), its hour ranges; a day left out is a day it does not run. Null (or left out on create): every hour. At least one hour. Answered normalised: days in week order, ranges sorted and overlapping or touching ones joined. Where daylight saving skips an hour it is not run; a repeated hour is run both times. Fetch leaves the campaign out outside its hours; events for what was fetched before its hours ended still count. Changing it never sends the campaign back to review.',
    examples: [
      {
        mon: [[9, 17]],
        fri: [
          [9, 12],
          [14, 18],
        ],
        sat: [[10, 14]],
      },
    ],
  }),
);

const PriceModel = Type.Union(
  PRICE_MODELS.map((model) => Type.Literal(model)),
  {
    description:
      '`cpm` per thousand billable impressions, `cpc` per billable click, `flat` a fixed amount for the flight (not charged per event).',
  },
);

const AmountMicros = Type.Integer({
  minimum: 1,
  maximum: MAX_MICROS,
  description: 'Micros of the deployment’s currency (1 unit is 1000000): 2.50 is 2500000.',
});

const Currency = Type.String({
  description: 'The deployment’s currency (ISO 4217, `PLACARD_CURRENCY`), which every amount is in.',
});

const Price = Type.Union(
  [Type.Object({ model: PriceModel, amountMicros: AmountMicros, currency: Currency }), Type.Null()],
  {
    description:
      'What the advertiser is charged (D18), or null for a house campaign, whose events cost nothing.',
  },
);

const Budget = Type.Object(
  {
    totalMicros: Nullable(AmountMicros),
    dailyMicros: Nullable(AmountMicros),
    currency: Currency,
  },
  {
    description:
      'Spend budgets (D18): what the campaign’s billable events may cost in all (`totalMicros`) and per day in its time zone (`dailyMicros`); null: no budget.',
  },
);

/** Who sets the prices of an advertiser's campaigns (D18). */
export const AdvertiserPricingField = Type.Union(
  ADVERTISER_PRICING.map((pricing) => Type.Literal(pricing)),
  {
    description:
      'Who sets the prices of its campaigns (D18): `operator`, the operator alone (the default), or `advertiser`, its own people too (on creation and later, like the operator). The operator decides; priority and weight stay the operator’s either way.',
  },
);

/** When a budget runs out at the pace of the last hour's spend (D18). */
const BudgetForecast = Type.Union(
  [
    Type.Object({ state: Type.Literal('runs_out'), at: Instant }, { additionalProperties: false }),
    Type.Object({ state: Type.Literal('lasts') }, { additionalProperties: false }),
    Type.Object({ state: Type.Literal('spent') }, { additionalProperties: false }),
    Type.Null(),
  ],
  {
    description:
      'When the budget runs out if it goes on being spent at the pace of the last hour: `runs_out` at `at`, within its period; `lasts` (not at the current pace: not before its period ends, or nothing was spent in the last hour); `spent` (nothing is left). Null without a budget or before anything was spent against it.',
  },
);

const Advertiser = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    budget: Type.Object(
      {
        totalMicros: Nullable(AmountMicros),
        monthlyMicros: Nullable(AmountMicros),
        currency: Currency,
      },
      {
        description:
          'Spend budgets (D18): what all its campaigns’ billable events may cost together in all (`totalMicros`) and per billing month (`monthlyMicros`, in `PLACARD_BILLING_TIME_ZONE`); null: no budget. The most restrictive of its and its campaigns’ budgets wins.',
      },
    ),
    pricing: AdvertiserPricingField,
    spend: Type.Optional(
      Type.Object(
        {
          month: Type.String({ description: 'The billing month, `YYYY-MM`.' }),
          monthMicros: Type.Integer(),
          totalMicros: Type.Integer(),
          currency: Currency,
          forecast: Type.Object({ total: BudgetForecast, month: BudgetForecast }),
        },
        {
          description:
            'What its campaigns spent this billing month and in total, and when each budget runs out at the current pace (one advertiser’s answer).',
        },
      ),
    ),
    createdAt: Instant,
    updatedAt: Instant,
  },
  { $id: 'Advertiser' },
);

/** What `currency` may be in money sent: left out, or the deployment's own. */
const CurrencySent = Type.Optional(
  Type.String({
    description: 'May be left out; when sent it must be the deployment’s currency (else 422).',
  }),
);

const OptionalAmount = Type.Optional(Nullable(AmountMicros));

/**
 * Spend budgets as sent (D18): `totalMicros` and the one of `period` (a campaign's day, an
 * advertiser's billing month), each left out or null for none, or null for neither.
 */
function budgetInput<Period extends string>(period: Period, description: string) {
  const perPeriod = { [period]: OptionalAmount } as Record<Period, typeof OptionalAmount>;
  return Type.Union(
    [
      Type.Object(
        { totalMicros: OptionalAmount, ...perPeriod, currency: CurrencySent },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    { description },
  );
}

/** An advertiser's budgets as sent (D18). */
export const advertiserBudgetField = budgetInput(
  'monthlyMicros',
  'Spend budgets (D18): in all and per billing month; an amount left out or null is none, `budget: null` removes both. An event that would take the advertiser’s spend past one is stored `invalid`, `past advertiser budget`, and costs nothing; once spent, its campaigns are not offered until the next billing month (monthly) or until the budget changes (total).',
);

/** One price a campaign has had, with what was billed at it. */
const CampaignPrice = Type.Object(
  {
    since: Instant,
    model: Nullable(PriceModel),
    amountMicros: Nullable(AmountMicros),
    currency: Currency,
    setBy: Type.String({ description: 'Who set it, as the audit log names actors.' }),
    billedUnits: Type.Integer({ description: 'Impressions (CPM) or clicks (CPC) charged at it.' }),
    spendMicros: Type.Integer({ description: 'What they cost, in micros of the currency.' }),
  },
  { $id: 'CampaignPrice' },
);

const CampaignRecord = Type.Object(
  {
    id: Type.Integer(),
    advertiserId: Type.Integer(),
    title: Type.String(),
    description: Nullable(Type.String()),
    category: Nullable(Type.String()),
    destinationUrl: Type.String({ format: 'uri' }),
    status: Status,
    priority: Type.Integer(),
    weight: Type.Integer(),
    placements: Type.Array(Type.String()),
    countries: Type.Array(Type.String()),
    devices: Type.Array(Type.String()),
    startAt: NullableInstant,
    endAt: NullableInstant,
    timeZone: Type.String(),
    caps: Caps,
    pacing: Pacing,
    frequencyCaps: FrequencyCaps,
    schedule: Schedule,
    price: Price,
    budget: Budget,
    spend: Type.Optional(
      Type.Object(
        {
          day: Type.String({ description: 'The campaign’s local day, `YYYY-MM-DD`.' }),
          dayMicros: Type.Integer(),
          totalMicros: Type.Integer(),
          currency: Currency,
          forecast: Type.Object({ total: BudgetForecast, daily: BudgetForecast }),
        },
        {
          description:
            'What it spent today and in total, as its budgets count it, and when each budget runs out at the current pace (one campaign’s answer).',
        },
      ),
    ),
    cappedUntil: NullableInstant,
    rejectionReason: Nullable(Type.String()),
    createdAt: Instant,
    updatedAt: Instant,
  },
  { $id: 'CampaignRecord' },
);

/** The editable fields of a campaign; on create, `advertiserId`, `title` and `destinationUrl` are required. */
export const campaignFields = {
  title: Type.String({ minLength: 1 }),
  description: Nullable(Type.String()),
  category: Nullable(Type.String()),
  destinationUrl: Type.String({ format: 'uri', description: 'http or https.' }),
  priority: Type.Integer({
    description: 'Higher is served first. The operator’s alone: anyone else changing it gets 403.',
  }),
  weight: Type.Integer({
    minimum: 1,
    description:
      'Share of the draw within a priority. The operator’s alone: anyone else changing it gets 403.',
  }),
  placements: Type.Array(Type.String()),
  countries: Type.Array(Type.String({ description: 'ISO 3166-1 alpha-2; empty: everywhere.' })),
  devices: Type.Array(Type.String({ description: 'mobile, desktop, tablet; empty: all.' })),
  startAt: NullableInstant,
  endAt: NullableInstant,
  timeZone: Type.String({ description: 'IANA time zone daily caps count in.' }),
  caps: Type.Partial(Caps, { additionalProperties: false }),
  pacing: Pacing,
  frequencyCaps: Type.Union([FrequencyCaps, Type.Null()]),
  schedule: Schedule,
  price: Type.Union(
    [
      Type.Object(
        {
          model: PriceModel,
          amountMicros: AmountMicros,
          currency: CurrencySent,
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    {
      description:
        'What the advertiser is charged (D18); null for none. The operator’s, and the advertiser’s own people’s too when its `pricing` is `advertiser`: anyone else changing it gets 403 naming why. A change applies to events from then on, whoever makes it; the campaign’s prices keep every one, with who set it.',
    },
  ),
  budget: budgetInput(
    'dailyMicros',
    'Spend budgets (D18): in all and per local day; a budget left out or null is none, `budget: null` removes both. The advertiser may set them on its own campaigns, and a change does not send the campaign back to review. Raising or removing the total budget of a campaign it completed, before its end, makes it `paused`, to resume.',
  ),
};

const Placement = Type.Object(
  { id: Type.String(), description: Type.String(), enabled: Type.Boolean() },
  { $id: 'Placement' },
);

const AuditRecord = Type.Object(
  {
    id: Type.Integer(),
    at: Instant,
    actor: Type.String(),
    objectType: Type.String(),
    objectId: Type.String(),
    action: Type.String(),
    reason: Nullable(Type.String()),
    before: Type.Unknown(),
    after: Type.Unknown(),
  },
  { $id: 'AuditRecord' },
);

const Counts = {
  impressions: Type.Integer({ description: 'Billable (counted) impressions.' }),
  clicks: Type.Integer({ description: 'Billable (counted) clicks.' }),
  ctr: Nullable(Type.Number({ description: 'Clicks per impression; null without impressions.' })),
  nonBillableImpressions: Type.Integer(),
  nonBillableClicks: Type.Integer(),
  impressionsWithViewer: Type.Integer({
    description:
      'Billable impressions the partner reported with a `viewer` (D20): the ones frequency caps count. Without a viewer no frequency cap applies.',
  }),
  viewerShare: Nullable(
    Type.Number({ description: 'impressionsWithViewer per billable impression; null without impressions.' }),
  ),
  spendMicros: Type.Integer({
    description:
      'What the billable events cost, in micros of `currency` (1 unit = 1,000,000): the sum of each event’s cost, fixed when it was recorded.',
  }),
  ecpmMicros: Nullable(
    Type.Integer({
      description:
        'Effective CPM: floor(spendMicros × 1000 / impressions), in micros; null without impressions.',
    }),
  ),
  ecpcMicros: Nullable(
    Type.Integer({
      description: 'Effective CPC: floor(spendMicros / clicks), in micros; null without clicks.',
    }),
  ),
  earningsMicros: Type.Optional(
    Type.Integer({
      description:
        'What the events earned their partners (the partners’ revenue shares of the spend, fixed with each event’s cost), in micros. In the operator’s and partners’ reports only; never in an advertiser’s.',
    }),
  ),
  marginMicros: Type.Optional(
    Type.Integer({
      description:
        'spendMicros − earningsMicros: what the operator keeps, in micros. In the operator’s reports only.',
    }),
  ),
  currency: Type.String({ description: 'The ISO 4217 currency of every amount (`PLACARD_CURRENCY`).' }),
};

const Report = Type.Object(
  {
    from: Instant,
    to: Instant,
    granularity: Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day')]),
    timeZone: Type.String(),
    groupBy: Type.Array(Type.String()),
    currency: Type.String({ description: 'The ISO 4217 currency of every amount (`PLACARD_CURRENCY`).' }),
    rows: Type.Array(
      Type.Object(
        {
          period: Type.String({ description: 'Start of the period, in the report’s time zone.' }),
          ...Counts,
        },
        { additionalProperties: Type.Union([Type.String(), Type.Number(), Type.Null()]) },
      ),
    ),
    totals: Type.Object(Counts),
  },
  { $id: 'Report' },
);

const User = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String({ format: 'email' }),
    account: Type.String({ description: '`operator`, `advertiser:<id>` or `partner:<id>`.' }),
    role: Role,
    status: Type.Union([Type.Literal('invited'), Type.Literal('active'), Type.Literal('disabled')], {
      description: '`invited`: has not set a password yet.',
    }),
    createdAt: Instant,
    passwordChangedAt: NullableInstant,
    disabledAt: NullableInstant,
  },
  { $id: 'User' },
);

const KEY_SIGNAL_TEXT =
  '`ctr`: click-through rate far above (or below) its placements’ baseline; `burst`: a 10-second slice far above its usual rate; `clicks without impressions`: a high share of its clicks had none (D15)';

const Signal = Type.Union(
  FLAG_SIGNALS.map((signal) => Type.Literal(signal)),
  {
    description: `${KEY_SIGNAL_TEXT}; \`partner ctr\`: the partner's keys together clicked far above their placements' baseline (the flag is stored on its most clicked key and lists them all in \`evidence.keys\`; suspending it suspends them all); \`shared addresses\`: end-user addresses (as stored, IPv4 /24 or IPv6 /48) clicked far above their placements' baseline through several partners' keys, and the partner's own clicks from them too (stored on its most clicked key there; \`evidence.addresses\` lists the addresses with their partners, keys, clicks and rate against the baseline, \`evidence.keys\` the partner's keys, which suspending it suspends).`,
  },
);

const PolicySignal = Type.Union(
  KEY_SIGNALS.map((signal) => Type.Literal(signal)),
  { description: `${KEY_SIGNAL_TEXT}.` },
);

const KeyFlag = Type.Object(
  {
    id: Type.Integer(),
    apiKeyId: Type.Integer(),
    partnerId: Type.Integer(),
    signal: Signal,
    status: Type.Union(
      FLAG_STATUSES.map((status) => Type.Literal(status)),
      { description: '`open` until an operator (or the policy) reviews it.' },
    ),
    summary: Type.String({ description: 'The evidence in words.' }),
    evidence: Type.Object(
      {
        summary: Type.String(),
        windowStart: Instant,
        windowEnd: Instant,
        measure: Type.Number({
          description: 'How far past normal: a ratio, or a share for clicks without impressions.',
        }),
        threshold: Type.Number({ description: 'What `measure` was held to.' }),
      },
      {
        additionalProperties: true,
        description:
          'The figures of the latest finding, the window and the thresholds; the fields beyond these depend on the signal (docs/product-rules.md, D15).',
      },
    ),
    createdAt: Instant,
    updatedAt: Type.String({ format: 'date-time', description: 'When the evidence was last updated.' }),
    reviewedAt: NullableInstant,
    reviewedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'The audit actor who reviewed it; `system` for the automatic policy.',
    }),
    reviewNote: Nullable(Type.String()),
  },
  { $id: 'KeyFlag' },
);

export const FlagPolicy = Type.Object(
  {
    autoSuspend: Type.Boolean({ description: 'Off unless an operator turns it on.' }),
    signals: Type.Array(PolicySignal, { description: 'The signals that may suspend a key by themselves.' }),
    multiplier: Type.Number({
      minimum: 1,
      maximum: 100,
      description: 'A flag suspends its key only when its measure is at least this many times its threshold.',
    }),
  },
  { $id: 'FlagPolicy' },
);

/** A month's money, or one advertiser's or partner's of it (services/money-summary.ts). */
const MoneyFigures = {
  spendMicros: Type.Integer({ description: 'Revenue: what advertisers spent, in micros of the currency.' }),
  earningsMicros: Type.Integer({ description: 'What partners earned of it: the payouts owed, in micros.' }),
  marginMicros: Type.Integer({
    description: 'spendMicros − earningsMicros: what the operator keeps, in micros.',
  }),
  marginBasisPoints: Nullable(
    Type.Integer({
      description:
        'floor(marginMicros × 10,000 / spendMicros): the margin in basis points of the revenue; null without revenue.',
    }),
  ),
};
const MoneyLine = Type.Object({ id: Type.Integer(), name: Type.String(), ...MoneyFigures });

const MoneySummary = Type.Object(
  {
    month: Type.String({ description: 'YYYY-MM, a month of the billing time zone.' }),
    from: Instant,
    to: Instant,
    timeZone: Type.String({ description: 'The billing time zone (`PLACARD_BILLING_TIME_ZONE`).' }),
    currency: Type.String({ description: 'The ISO 4217 currency of every amount (`PLACARD_CURRENCY`).' }),
    live: Type.Boolean({ description: 'Whether the month has not ended, so its figures still grow.' }),
    totals: Type.Object(MoneyFigures),
    advertisers: Type.Array(MoneyLine, { description: 'Those with revenue in the month, most first.' }),
    partners: Type.Array(MoneyLine, {
      description: 'Those whose traffic brought revenue in the month, most earnings first.',
    }),
    months: Type.Array(Type.Object({ month: Type.String(), ...MoneyFigures }), {
      description: 'The totals of this month and the eleven before it, newest first.',
    }),
  },
  { $id: 'MoneySummary' },
);

/** A signed amount: statements' figures and adjustments may be below zero. */
const SignedMicros = (description: string) =>
  Type.Integer({
    minimum: MIN_MICROS,
    maximum: MAX_MICROS,
    description: `${description} In micros of the currency.`,
  });

const StatementKind = Type.Union([Type.Literal('advertiser'), Type.Literal('partner')], {
  description: 'Whose statement: an advertiser’s (its spend) or a partner’s (its earnings).',
});

const StatementPayment = Type.Object({
  reference: Type.String({ description: 'The payment’s own reference, such as a bank transfer’s id.' }),
  paidAt: Instant,
  paidBy: Type.String({ description: 'Who recorded it, as the audit log names actors.' }),
});

const statementSummaryFields = {
  id: Type.Integer(),
  kind: StatementKind,
  accountId: Type.Integer(),
  accountName: Type.String({ description: 'The account’s name when the statement was issued.' }),
  month: Type.String({ description: '`YYYY-MM`, a calendar month in the billing time zone.' }),
  periodStart: Instant,
  periodEnd: Type.String({ format: 'date-time', description: 'The next month’s start (exclusive).' }),
  currency: Currency,
  issuedAt: Instant,
  issuedBy: Type.String({ description: 'Who issued it, as the audit log names actors.' }),
  subtotalMicros: SignedMicros('The month’s spend (advertiser) or earnings (partner).'),
  adjustmentsMicros: SignedMicros('The adjustments it carries.'),
  openingBalanceMicros: SignedMicros(
    'What the partner’s previous statement carried forward (0 for an advertiser).',
  ),
  totalMicros: SignedMicros('Subtotal, adjustments and opening balance.'),
  payableMicros: SignedMicros(
    'A partner’s: the total when it reaches the minimum payout, else 0. An advertiser’s: its total.',
  ),
  carriedForwardMicros: SignedMicros('What the partner’s next statement opens with.'),
  payment: Nullable(StatementPayment),
};

const StatementSummary = Type.Object(statementSummaryFields, { $id: 'StatementSummary' });

const StatementLine = Type.Object({
  kind: Type.Union(
    [
      Type.Literal('campaign'),
      Type.Literal('flat'),
      Type.Literal('placement_key'),
      Type.Literal('adjustment'),
    ],
    {
      description:
        '`campaign`: a campaign’s spend; `flat`: a flat campaign’s price, in the month its flight starts; `placement_key`: a partner’s earnings on one placement through one API key; `adjustment`: one carried.',
    },
  ),
  campaignId: Nullable(Type.Integer()),
  campaignName: Nullable(Type.String()),
  placementId: Nullable(Type.String()),
  apiKeyId: Nullable(Type.Integer()),
  apiKeyName: Nullable(Type.String({ description: 'The key’s label, or its prefix without one.' })),
  impressions: Type.Integer({ description: 'Billable (counted) impressions.' }),
  clicks: Type.Integer({ description: 'Billable (counted) clicks.' }),
  invalidImpressions: Type.Integer({ description: 'Impressions not billable (D15): never in the amount.' }),
  invalidClicks: Type.Integer(),
  amountMicros: SignedMicros('The line’s amount.'),
  adjustmentId: Nullable(Type.Integer()),
  reason: Nullable(Type.String()),
});

const Statement = Type.Object(
  { ...statementSummaryFields, lines: Type.Array(StatementLine) },
  { $id: 'Statement' },
);

const Adjustment = Type.Object(
  {
    id: Type.Integer(),
    kind: StatementKind,
    accountId: Type.Integer(),
    accountName: Type.String(),
    amountMicros: SignedMicros('Added to the account’s next statement: negative credits it.'),
    reason: Type.String(),
    createdAt: Instant,
    createdBy: Type.String({ description: 'Who recorded it, as the audit log names actors.' }),
    carriedOnStatementId: Nullable(
      Type.Integer({ description: 'The statement that carries it; null until the next one is issued.' }),
    ),
  },
  { $id: 'Adjustment' },
);

const StatementMonth = Type.Object(
  {
    month: Type.String({ description: '`YYYY-MM` in the billing time zone.' }),
    closed: Type.Boolean({ description: 'Its end in the billing time zone has passed.' }),
    issued: Type.Boolean(),
    nextToIssue: Type.Boolean({ description: 'The month `POST /statements` takes next.' }),
  },
  { $id: 'StatementMonth' },
);

export const MANAGEMENT_SCHEMAS = [
  MoneySummary,
  KeyFlag,
  FlagPolicy,
  User,
  Partner,
  RevenueShare,
  ApiKey,
  AdminToken,
  Advertiser,
  CampaignRecord,
  CampaignPrice,
  Placement,
  AuditRecord,
  Report,
  StatementSummary,
  Statement,
  Adjustment,
  StatementMonth,
];

export const ref = (id: string) => Type.Ref(id);

/** What the document says of a management operation beside its request parts. */
export interface OperationDoc {
  summary: string;
  description?: string;
  /** The success status and body. */
  ok: [number, TSchema] | [number, TSchema, string];
  /** Other media types the success may be answered in, beside JSON, and their bodies. */
  alsoAs?: Record<string, TSchema>;
}

/** A success response: its JSON body, and its other media types when it has some. */
function success(body: TSchema, description: string, alsoAs?: Record<string, TSchema>) {
  if (alsoAs === undefined) return { ...body, description };
  const content = Object.fromEntries(
    Object.entries({ 'application/json': body, ...alsoAs }).map(([type, schema]) => [type, { schema }]),
  );
  return { description, content };
}

/**
 * A management route's schema but for its request parts (which its route module adds beside it):
 * its `operationId` (the name generated clients give it), tag, summary, admin-token security,
 * success and error responses.
 */
export function operation(operationId: string, tag: string, doc: OperationDoc) {
  const [status, body, description] = doc.ok;
  return {
    operationId,
    tags: [tag],
    summary: doc.summary,
    ...(doc.description !== undefined && { description: doc.description }),
    security: [{ adminToken: [] }],
    response: {
      [status]: success(body, description ?? 'Done.', doc.alsoAs),
      ...managementErrors(400, 401, 403, 404, 409, 422, 429, 500),
    },
  };
}
