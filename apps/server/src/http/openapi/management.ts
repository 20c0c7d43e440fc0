import { Type, type TSchema } from 'typebox';
import { CAMPAIGN_STATUSES } from '../../domain/campaigns.js';
import { PACINGS } from '../../domain/pacing.js';
import { CAMPAIGN_ACTIONS } from '../../domain/lifecycle.js';
import { FLAG_SIGNALS, FLAG_STATUSES } from '../../domain/key-flags.js';
import { MAX_LIMIT_SETTING } from '../../domain/rate-limits.js';
import { REPORT_DIMENSIONS } from '../../domain/report-request.js';
import { MAX_ROTATION_HOURS } from '../../services/partners.js';
import {
  IdParams,
  managementErrors,
  withOperationIds,
  Instant,
  Nullable,
  NullableInstant,
  One,
  Page,
  PageQuery,
} from './common.js';

/**
 * Schemas of the management API (`/admin/v1`), attached to its Fastify routes for the OpenAPI
 * document. Validation stays in the domain layer (one set of rules and messages for the API and the
 * CLI), so these describe; a test checks real responses against them.
 */

/** A rate (per second) or burst: a whole number, as the server accepts them. */
const LimitSetting = Nullable(Type.Integer({ minimum: 1, maximum: MAX_LIMIT_SETTING }));

const RateLimits = Type.Object({
  fetchRate: LimitSetting,
  fetchBurst: LimitSetting,
  eventsRate: LimitSetting,
  eventsBurst: LimitSetting,
});

const Partner = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    blockedCategories: Type.Array(Type.String()),
    createdAt: Instant,
    updatedAt: Instant,
  },
  { $id: 'Partner' },
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

const NewApiKey = Type.Intersect([
  Type.Ref('ApiKey'),
  Type.Object({ key: Type.String({ description: 'The key itself: shown this once, never again.' }) }),
]);

const Role = Type.Union([Type.Literal('admin'), Type.Literal('manager'), Type.Literal('reporter')], {
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

const Advertiser = Type.Object(
  { id: Type.Integer(), name: Type.String(), createdAt: Instant, updatedAt: Instant },
  { $id: 'Advertiser' },
);

const Caps = Type.Object({
  impressionsTotal: Nullable(Type.Integer()),
  clicksTotal: Nullable(Type.Integer()),
  impressionsDaily: Nullable(Type.Integer()),
  clicksDaily: Nullable(Type.Integer()),
});

const Status = Type.Union(CAMPAIGN_STATUSES.map((status) => Type.Literal(status)));

const Pacing = Type.Union(
  PACINGS.map((pacing) => Type.Literal(pacing)),
  {
    description:
      'How the caps are spent (D16): `asap` (default) as fast as the campaign is drawn; `even` spread over each cap’s period (the local day, or the flight for a total cap) in proportion to the traffic expected, so a cap is reached near the period’s end. `even` needs a daily cap, or a total cap and an `endAt`.',
  },
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
    cappedUntil: NullableInstant,
    rejectionReason: Nullable(Type.String()),
    createdAt: Instant,
    updatedAt: Instant,
  },
  { $id: 'CampaignRecord' },
);

/** The editable fields of a campaign; on create, `advertiserId`, `title` and `destinationUrl` are required. */
const campaignFields = {
  title: Type.String({ minLength: 1 }),
  description: Nullable(Type.String()),
  category: Nullable(Type.String()),
  destinationUrl: Type.String({ format: 'uri', description: 'http or https.' }),
  priority: Type.Integer(),
  weight: Type.Integer({ minimum: 1 }),
  placements: Type.Array(Type.String()),
  countries: Type.Array(Type.String({ description: 'ISO 3166-1 alpha-2; empty: everywhere.' })),
  devices: Type.Array(Type.String({ description: 'mobile, desktop, tablet; empty: all.' })),
  startAt: NullableInstant,
  endAt: NullableInstant,
  timeZone: Type.String({ description: 'IANA time zone daily caps count in.' }),
  caps: Type.Partial(Caps, { additionalProperties: false }),
  pacing: Pacing,
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
};

const Report = Type.Object(
  {
    from: Instant,
    to: Instant,
    granularity: Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day')]),
    timeZone: Type.String(),
    groupBy: Type.Array(Type.String()),
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

/** A one-time link, given out once: the store keeps only its digest. */
const OneTimeLink = Type.Object({
  link: Type.String({ description: 'Pass it on: it works once, until `linkExpiresAt` (72 hours).' }),
  linkExpiresAt: Instant,
});

const Signal = Type.Union(
  FLAG_SIGNALS.map((signal) => Type.Literal(signal)),
  {
    description:
      '`ctr`: click-through rate far above (or below) its placements’ baseline; `burst`: a 10-second slice far above its usual rate; `clicks without impressions`: a high share of its clicks had none (D15).',
  },
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

const FlagPolicy = Type.Object(
  {
    autoSuspend: Type.Boolean({ description: 'Off unless an operator turns it on.' }),
    signals: Type.Array(Signal, { description: 'The signals that may suspend a key by themselves.' }),
    multiplier: Type.Number({
      minimum: 1,
      maximum: 100,
      description: 'A flag suspends its key only when its measure is at least this many times its threshold.',
    }),
  },
  { $id: 'FlagPolicy' },
);

export const MANAGEMENT_SCHEMAS = [
  KeyFlag,
  FlagPolicy,
  User,
  Partner,
  ApiKey,
  AdminToken,
  Advertiser,
  CampaignRecord,
  Placement,
  AuditRecord,
  Report,
];

const ref = (id: string) => Type.Ref(id);

interface RouteDoc {
  summary: string;
  description?: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
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

/** A route's schema: tag, summary, admin-token security, success and error responses. */
function route(tag: string, doc: RouteDoc) {
  const [status, body, description] = doc.ok;
  return {
    tags: [tag],
    summary: doc.summary,
    ...(doc.description !== undefined && { description: doc.description }),
    security: [{ adminToken: [] }],
    ...(doc.params && { params: doc.params }),
    ...(doc.querystring && { querystring: doc.querystring }),
    // The routes refuse any field their body schema does not name (a 422), so the document says so.
    ...(doc.body && { body: { ...doc.body, additionalProperties: false } }),
    response: {
      [status]: success(body, description ?? 'Done.', doc.alsoAs),
      ...managementErrors(400, 401, 403, 404, 409, 422, 429, 500),
    },
  };
}

const PlacementParams = Type.Object({ id: Type.String() });

const ROUTES = {
  listPartners: route('Partners', {
    summary: 'List partners',
    querystring: PageQuery,
    ok: [200, Page(ref('Partner'))],
  }),
  createPartner: route('Partners', {
    summary: 'Create a partner',
    body: Type.Object({ name: Type.String(), blockedCategories: Type.Optional(Type.Array(Type.String())) }),
    ok: [201, One(ref('Partner')), 'Created.'],
  }),
  getPartner: route('Partners', {
    summary: 'Get a partner',
    params: IdParams,
    ok: [200, One(ref('Partner'))],
  }),
  updatePartner: route('Partners', {
    summary: 'Rename a partner or change its blocked categories',
    params: IdParams,
    body: Type.Object({
      name: Type.Optional(Type.String()),
      blockedCategories: Type.Optional(Type.Array(Type.String())),
    }),
    ok: [200, One(ref('Partner'))],
  }),
  listKeys: route('API keys', {
    summary: 'List a partner’s API keys',
    params: IdParams,
    querystring: PageQuery,
    ok: [200, Page(ref('ApiKey'))],
  }),
  createKey: route('API keys', {
    summary: 'Issue an API key',
    description: 'The key is in the response once; only its SHA-256 digest is stored.',
    params: IdParams,
    body: Type.Object({ label: Type.Optional(Type.String()) }),
    ok: [201, One(NewApiKey), 'Created; `key` is shown this once.'],
  }),
  getKey: route('API keys', { summary: 'Get an API key', params: IdParams, ok: [200, One(ref('ApiKey'))] }),
  rotateKey: route('API keys', {
    summary: 'Rotate an API key',
    description:
      'Issues a replacement; the old key keeps working for `expiresInHours` (default 24; 0 ends it now). Only an active key that was never rotated can be: 409 otherwise. The body may be left out.',
    params: IdParams,
    body: Type.Object({
      expiresInHours: Type.Optional(
        Nullable(
          Type.Number({
            minimum: 0,
            maximum: MAX_ROTATION_HOURS,
            description: 'Hours, fractions allowed; null or absent means 24.',
          }),
        ),
      ),
    }),
    ok: [
      201,
      One(Type.Intersect([NewApiKey, Type.Object({ previous: ref('ApiKey') })])),
      'The new key (shown this once) and the old one.',
    ],
  }),
  revokeKey: route('API keys', {
    summary: 'Revoke an API key',
    description: 'Every instance answers 401 for it within 2 s.',
    params: IdParams,
    ok: [200, One(ref('ApiKey'))],
  }),
  suspendKey: route('API keys', {
    summary: 'Suspend an API key (click fraud)',
    description: 'Every instance answers 403 `api key suspended` for it within 2 s.',
    params: IdParams,
    body: Type.Object({ reason: Type.String() }),
    ok: [200, One(ref('ApiKey'))],
  }),
  reinstateKey: route('API keys', {
    summary: 'Lift a suspension',
    params: IdParams,
    ok: [200, One(ref('ApiKey'))],
  }),
  setKeyLimits: route('API keys', {
    summary: 'Change a key’s own rate limits',
    description:
      'Per second and burst, for fetch and for events. Only the fields given change: an absent field keeps its value, `null` puts it back to the default (D7).',
    params: IdParams,
    body: Type.Partial(RateLimits),
    ok: [200, One(ref('ApiKey'))],
  }),

  listAdvertisers: route('Advertisers', {
    summary: 'List advertisers',
    querystring: PageQuery,
    ok: [200, Page(ref('Advertiser'))],
  }),
  createAdvertiser: route('Advertisers', {
    summary: 'Create an advertiser',
    body: Type.Object({ name: Type.String() }),
    ok: [201, One(ref('Advertiser')), 'Created.'],
  }),
  getAdvertiser: route('Advertisers', {
    summary: 'Get an advertiser',
    params: IdParams,
    ok: [200, One(ref('Advertiser'))],
  }),
  renameAdvertiser: route('Advertisers', {
    summary: 'Rename an advertiser',
    params: IdParams,
    body: Type.Object({ name: Type.String() }),
    ok: [200, One(ref('Advertiser'))],
  }),

  listCampaigns: route('Campaigns', {
    summary: 'List campaigns',
    querystring: Type.Intersect([
      PageQuery,
      Type.Object({
        status: Type.Optional(Status),
        advertiser: Type.Optional(Type.Integer()),
        placement: Type.Optional(Type.String()),
      }),
    ]),
    ok: [200, Page(ref('CampaignRecord'))],
  }),
  createCampaign: route('Campaigns', {
    summary: 'Create a campaign (as a draft)',
    // One object, not an intersection, so that it can refuse the fields it does not name.
    body: Type.Object({
      advertiserId: Type.Integer({ minimum: 1 }),
      // The optional fields, then the two required ones in their place again.
      ...Type.Partial(Type.Object(campaignFields)).properties,
      title: campaignFields.title,
      destinationUrl: campaignFields.destinationUrl,
    }),
    ok: [201, One(ref('CampaignRecord')), 'Created.'],
  }),
  getCampaign: route('Campaigns', {
    summary: 'Get a campaign',
    params: IdParams,
    ok: [200, One(ref('CampaignRecord'))],
  }),
  whyCampaign: route('Campaigns', {
    summary: 'Why a campaign is or is not served',
    description:
      "The reasons, in order, that the campaign would not be returned now to a fetch with the given placement, location, device and API key (its partner's blocked categories), each with a `code`, what it concerns and a `message` for people: `status`, `flight_ended`, `flight_not_started`, `daily_cap_reached`, `pacing_ahead` (even pacing holds it back: ahead of its plan, D16), `placements_disabled`, `placement_not_targeted`, `placement_disabled`, `country_not_targeted`, `device_not_targeted`, `category_blocked`. Without reasons it is eligible, and with a placement `chance` says how it fares in the draw (D4) against the campaigns this instance serves now: eligible campaigns of a higher priority (`ahead`), those of its priority (`rivals`), its share of their weight, and the share of 1,000 simulated fetches of `limit` campaigns it is returned in.",
    params: IdParams,
    querystring: Type.Object({
      placement: Type.Optional(Type.String()),
      location: Type.Optional(Type.String()),
      device: Type.Optional(Type.String()),
      key: Type.Optional(Type.Integer({ minimum: 1 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    }),
    ok: [
      200,
      One(
        Type.Object({
          campaignId: Type.Integer(),
          eligible: Type.Boolean(),
          reasons: Type.Array(
            Type.Object({
              code: Type.Union(
                [
                  'status',
                  'flight_ended',
                  'flight_not_started',
                  'daily_cap_reached',
                  'pacing_ahead',
                  'placements_disabled',
                  'placement_not_targeted',
                  'placement_disabled',
                  'country_not_targeted',
                  'device_not_targeted',
                  'category_blocked',
                ].map((code) => Type.Literal(code)),
              ),
              message: Type.String(),
              status: Type.Optional(Status),
              rejectionReason: Type.Optional(Nullable(Type.String())),
              startAt: Type.Optional(NullableInstant),
              endAt: Type.Optional(Instant),
              cappedUntil: Type.Optional(Instant),
              placement: Type.Optional(Type.String()),
              placements: Type.Optional(Type.Array(Type.String())),
              location: Type.Optional(Type.String()),
              countries: Type.Optional(Type.Array(Type.String())),
              device: Type.Optional(Type.String()),
              devices: Type.Optional(Type.Array(Type.String())),
              category: Type.Optional(Type.String()),
            }),
          ),
          chance: Nullable(
            Type.Object({
              limit: Type.Integer(),
              ahead: Type.Integer(),
              rivals: Type.Integer(),
              weightShare: Type.Number(),
              inResponse: Type.Number(),
            }),
          ),
        }),
      ),
    ],
  }),
  updateCampaign: route('Campaigns', {
    summary: 'Edit a campaign',
    description:
      'Status changes through the actions, with two exceptions. Editing the creative (title, description, category, destination URL) of an approved campaign sends it back to `pending_review`. Raising or removing the total cap of a campaign completed by that cap, while its flight is not over, makes it `paused`, to `resume`; a campaign completed by its end time stays completed.',
    params: IdParams,
    body: Type.Partial(Type.Object(campaignFields)),
    ok: [200, One(ref('CampaignRecord'))],
  }),
  ...(Object.fromEntries(
    CAMPAIGN_ACTIONS.map((action) => [
      `${action}Campaign`,
      route('Campaigns', {
        summary: `${action[0]!.toUpperCase()}${action.slice(1)} a campaign`,
        description:
          action === 'reject' || action === 'pause'
            ? 'A lifecycle action (D11); `reason` is recorded in the audit log (required to reject).'
            : 'A lifecycle action (D11); refused with 409 from a state it does not apply to. The body may be left out.',
        params: IdParams,
        body: Type.Object({
          reason:
            action === 'reject'
              ? Type.String({ pattern: '\\S', description: 'Not blank.' })
              : Type.Optional(Type.String()),
        }),
        ok: [200, One(ref('CampaignRecord'))],
      }),
    ]),
  ) as Record<`${(typeof CAMPAIGN_ACTIONS)[number]}Campaign`, ReturnType<typeof route>>),

  listPlacements: route('Placements', {
    summary: 'List placements',
    ok: [200, Type.Object({ status: Type.Literal('success'), data: Type.Array(ref('Placement')) })],
  }),
  addPlacement: route('Placements', {
    summary: 'Add a placement',
    body: Type.Object({ id: Type.String({ description: 'A slug.' }), description: Type.String() }),
    ok: [201, One(ref('Placement')), 'Created.'],
  }),
  getPlacement: route('Placements', {
    summary: 'Get a placement',
    params: PlacementParams,
    ok: [200, One(ref('Placement'))],
  }),
  updatePlacement: route('Placements', {
    summary: 'Describe, enable or disable a placement',
    params: PlacementParams,
    body: Type.Object({ description: Type.Optional(Type.String()), enabled: Type.Optional(Type.Boolean()) }),
    ok: [200, One(ref('Placement'))],
  }),
  enablePlacement: route('Placements', {
    summary: 'Enable a placement',
    params: PlacementParams,
    ok: [200, One(ref('Placement'))],
  }),
  disablePlacement: route('Placements', {
    summary: 'Disable a placement',
    description: 'Fetch for it answers 400 `unknown placement` within 2 s.',
    params: PlacementParams,
    ok: [200, One(ref('Placement'))],
  }),
  listAudit: route('Audit', {
    summary: 'Read the audit log',
    description:
      'Oldest first by default; `order=newest` gives the latest entries first, and its `nextCursor` pages towards older ones.',
    querystring: Type.Intersect([
      PageQuery,
      Type.Object({
        objectType: Type.Optional(Type.String()),
        objectId: Type.Optional(Type.String()),
        order: Type.Optional(
          Type.Union([Type.Literal('oldest'), Type.Literal('newest')], { default: 'oldest' }),
        ),
      }),
    ]),
    ok: [200, Page(ref('AuditRecord'))],
  }),
  listAdminTokens: route('Admin tokens', {
    summary: 'List admin tokens',
    description: 'Every token ever issued, with its prefix, status and last use; never the token itself.',
    querystring: PageQuery,
    ok: [200, Page(ref('AdminToken'))],
  }),
  createAdminToken: route('Admin tokens', {
    summary: 'Issue an admin token',
    description:
      'The token is in the response once; only its SHA-256 digest is stored. Without `expiresInHours` it never expires; without `account` and `role` it acts as an operator admin. Only operator admins manage tokens. Audited.',
    body: Type.Object({
      label: Type.String({ minLength: 1, maxLength: 100, description: 'Who or what it is for.' }),
      expiresInHours: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 87_600 })),
      account: Type.Optional(
        Type.String({
          description:
            'What the token acts for: `operator` (the default), `advertiser:<id or name>` or `partner:<id or name>`.',
        }),
      ),
      role: Type.Optional(Role),
    }),
    ok: [
      201,
      One(
        Type.Intersect([
          ref('AdminToken'),
          Type.Object({
            token: Type.String({ description: 'The token itself: shown this once, never again.' }),
          }),
        ]),
      ),
      'Created; `token` is shown this once.',
    ],
  }),
  listUsers: route('Users', {
    summary: 'List users',
    description:
      "The users the caller may see: every account's for the operator, its own for an advertiser's or partner's.",
    querystring: Type.Intersect([
      PageQuery,
      Type.Object({
        account: Type.Optional(
          Type.String({
            description: 'Only this account: `operator`, `advertiser:<id or name>`, `partner:<id or name>`.',
          }),
        ),
      }),
    ]),
    ok: [200, Page(ref('User'))],
  }),
  createUser: route('Users', {
    summary: 'Create a user',
    description:
      'Creates a user without a password and answers their one-time invitation link, shown this once. Only an admin of the account (or of the operator) may. Audited.',
    body: Type.Object({
      email: Type.String({ format: 'email' }),
      account: Type.Optional(
        Type.String({
          description: '`operator` (the default), `advertiser:<id or name>` or `partner:<id or name>`.',
        }),
      ),
      role: Role,
    }),
    ok: [201, One(Type.Intersect([ref('User'), OneTimeLink])), 'Created; `link` is shown this once.'],
  }),
  getUser: route('Users', { summary: 'Get a user', params: IdParams, ok: [200, One(ref('User'))] }),
  inviteUser: route('Users', {
    summary: 'A new invitation link',
    description:
      'For a user who has not set a password yet; earlier links stop working (409 once a password is set).',
    params: IdParams,
    ok: [200, One(OneTimeLink)],
  }),
  resetUser: route('Users', {
    summary: 'A password-reset link',
    description: "Using it sets a new password and ends the user's sessions; earlier links stop working.",
    params: IdParams,
    ok: [200, One(OneTimeLink)],
  }),
  disableUser: route('Users', {
    summary: 'Disable a user',
    description: 'They can no longer sign in, and their sessions end now. Audited.',
    params: IdParams,
    ok: [200, One(ref('User'))],
  }),
  getAdminToken: route('Admin tokens', {
    summary: 'Get an admin token',
    params: IdParams,
    ok: [200, One(ref('AdminToken'))],
  }),
  revokeAdminToken: route('Admin tokens', {
    summary: 'Revoke an admin token',
    description:
      'It answers 401 from the next request on. A token may revoke itself; the last active token cannot be revoked (409): create its successor first. Audited.',
    params: IdParams,
    ok: [200, One(ref('AdminToken'))],
  }),
  listFlags: route('Flags', {
    summary: 'List key flags',
    description:
      'Newest first. The operator sees every flag; a partner’s token its own keys’ flags; an advertiser’s none.',
    querystring: Type.Intersect([
      PageQuery,
      Type.Object({ status: Type.Optional(Type.Union(FLAG_STATUSES.map((status) => Type.Literal(status)))) }),
    ]),
    ok: [200, Page(ref('KeyFlag'))],
  }),
  getFlag: route('Flags', { summary: 'Get a key flag', params: IdParams, ok: [200, One(ref('KeyFlag'))] }),
  dismissFlag: route('Flags', {
    summary: 'Dismiss a flag',
    description:
      'Reviewed and fine: the flag closes, and the key is not flagged for that signal again for 24 hours. Operator only; audited (409 once reviewed).',
    params: IdParams,
    body: Type.Object({
      note: Type.String({ minLength: 1, maxLength: 500, description: 'Why, for the audit log.' }),
    }),
    ok: [200, One(ref('KeyFlag'))],
  }),
  suspendFlag: route('Flags', {
    summary: 'Suspend the flagged key',
    description:
      'Suspends the key (every instance answers 403 `api key suspended` within 2 s) and closes the flag. Without `reason`, the partner reads the flag’s summary. Operator only; both audited (409 once reviewed).',
    params: IdParams,
    body: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }),
    ok: [200, One(ref('KeyFlag'))],
  }),
  getFlagPolicy: route('Flags', {
    summary: 'Read the automatic suspension policy',
    description: 'Off by default. Operator only.',
    ok: [200, One(ref('FlagPolicy'))],
  }),
  setFlagPolicy: route('Flags', {
    summary: 'Change the automatic suspension policy',
    description:
      'Only the fields given change. When on, a flag of one of `signals` whose measure reaches its threshold times `multiplier` suspends its key at once, as `system`, audited. Operator admins and managers only; audited.',
    body: Type.Partial(FlagPolicy),
    ok: [200, One(ref('FlagPolicy'))],
  }),
  report: route('Reports', {
    summary: 'Report impressions, clicks and CTR',
    description:
      'Live, from per-minute rollups. JSON, or CSV with `format=csv` or `Accept: text/csv`. Filters take a comma-separated list; `none` matches an absent country or device, or an event without a reason (`counted`). See docs/reports.md for verdicts and reasons.',
    querystring: Type.Object({
      from: Type.Optional(
        Type.String({
          description: 'A date (YYYY-MM-DD, in `timeZone`) or an ISO instant; default: start of today.',
        }),
      ),
      to: Type.Optional(Type.String({ description: 'A date (inclusive) or an ISO instant; default: now.' })),
      granularity: Type.Optional(
        Type.Union([Type.Literal('minute'), Type.Literal('hour'), Type.Literal('day')], { default: 'day' }),
      ),
      timeZone: Type.Optional(Type.String({ default: 'UTC', description: 'IANA time zone.' })),
      groupBy: Type.Optional(
        Type.String({ description: `Comma-separated: ${REPORT_DIMENSIONS.join(', ')}.` }),
      ),
      format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
      ...Object.fromEntries(REPORT_DIMENSIONS.map((dimension) => [dimension, Type.Optional(Type.String())])),
    }),
    ok: [200, One(ref('Report'))],
    alsoAs: {
      'text/csv': Type.String({
        description: 'A header line, then one line per row; sent as the attachment `placard-report.csv`.',
      }),
    },
  }),
};

/** Each management route's schema, by operation id. */
export const MANAGEMENT_ROUTES = withOperationIds(ROUTES);
