import { Type } from 'typebox';
import { DEVICES, type Device } from '../../domain/targeting.js';
import { MAX_USER_AGENT_LENGTH } from '../../domain/end-user.js';
import { IDEMPOTENCY_KEY_REUSED_MESSAGE } from '../../domain/verdicts.js';
import { MAX_SERVE_TOKEN_LENGTH } from '../../domain/serve-tokens.js';
import { MAX_VIEWER_LENGTH } from '../../domain/frequency-caps.js';

/**
 * The partner API (partner API sections 2 to 8, rule D2 to D10), described for the OpenAPI
 * document. These routes are served by `http/partner-api.ts` outside Fastify (the hot path), so
 * their schemas are added to the document here rather than collected from Fastify routes; the
 * examples are the contract's own.
 */

export const Campaign = Type.Object(
  {
    id: Type.Integer({ description: 'Use as `campaignId` when tracking.' }),
    title: Type.String(),
    description: Type.Optional(Type.String()),
    category: Type.Optional(Type.String({ description: 'An open set of words (D3), e.g. `technology`.' })),
    destinationUrl: Type.String({ format: 'uri', description: 'Send the user here on click, unchanged.' }),
    status: Type.Literal('running'),
    createdAt: Type.String({ format: 'date-time' }),
    token: Type.Optional(
      Type.String({
        description:
          'Only when fetched with `tokens=true` (D15): this campaign’s serve token for this page view. Send it back as `token` with its impression and its click. Never present otherwise.',
      }),
    ),
  },
  { $id: 'Campaign', description: 'A campaign to render (partner API 2.1).', additionalProperties: false },
);

export const FetchResponse = Type.Object(
  {
    status: Type.Literal('success'),
    data: Type.Array(Type.Ref('Campaign')),
    count: Type.Integer({ minimum: 0, description: 'The length of `data`.' }),
  },
  {
    $id: 'FetchResponse',
    additionalProperties: false,
    examples: [
      {
        status: 'success',
        data: [
          {
            id: 123,
            title: 'Tech Conference 2025',
            description: 'Join the biggest tech event of the year',
            category: 'technology',
            destinationUrl: 'https://example.com/conference',
            status: 'running',
            createdAt: '2025-01-15T10:30:00Z',
          },
        ],
        count: 1,
      },
    ],
  },
);

/**
 * A device type: the document lists the three names, so that a partner's generated types offer
 * them and refuse any other word. The server also takes them in any letter case (`Mobile` is
 * `mobile`); JSON Schema has no case-insensitive enum, so the description says so instead.
 */
const deviceSchema = {
  type: 'string',
  enum: [...DEVICES],
  description: `One of ${DEVICES.join(', ')}. The server also takes them in any letter case (\`Mobile\` is \`mobile\`).`,
} as const;

export const TrackingBody = Type.Object(
  {
    campaignId: Type.Integer({ minimum: 1, description: 'The `id` of the displayed campaign.' }),
    placement: Type.String({
      minLength: 1,
      description: 'Where it was rendered: the placement it was fetched for.',
    }),
    location: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2.' })),
    device: Type.Optional(Type.Unsafe<Device>(deviceSchema)),
    userAgent: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_USER_AGENT_LENGTH,
        description:
          'The end user’s `User-Agent`, forwarded (D15). A known bot’s events are stored as invalid (`known bot`) and not billed. Never stored.',
      }),
    ),
    userIp: Type.Optional(
      Type.String({
        description:
          'The end user’s IPv4 (dotted quad) or IPv6 address, forwarded (D15). An address past its rate is not billed (`address rate`); it is stored truncated to its IPv4 /24 or IPv6 /48.',
        examples: ['203.0.113.7'],
      }),
    ),
    token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_SERVE_TOKEN_LENGTH,
        description:
          'The campaign’s serve token from a fetch with `tokens=true` (D15), echoed. The token is billed for one impression within an hour of the fetch, and one click at least a second after that impression and within its hour; a token that does not verify for this key, campaign and placement (`bad token`), has expired (`expired token`), was used already (`token replay`; `double click` for a second click within 2 seconds of the first), or a click before its impression (`click without impression`) or too soon after it (`click too fast`) is stored but not billed.',
      }),
    ),
    viewer: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_VIEWER_LENGTH,
        description:
          'The partner’s own pseudonymous id for the end user (D20), 1 to 128 characters: a first-party id of its own making, never an e-mail address or a raw account number. Only campaigns with frequency caps read it: their impressions past a cap for this viewer are stored `past frequency cap` and not billed, and fetch leaves out the campaigns the viewer has reached. Without it no frequency cap applies. Placard keeps only a keyed hash of it per partner, in memory or Redis, for at most the longest cap’s window; it never stores or logs the value sent.',
        examples: ['u-7f3a9c'],
      }),
    ),
    occurredAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the end user saw or clicked the campaign, by the partner’s clock: an RFC 3339 UTC time ending in `Z` (D15). The event is judged on it rather than on its arrival (a token’s click speed, double clicks, the key flags’ bursts), so a backlog sent after an outage keeps its real pace. At most 5 seconds ahead of the server’s clock (read as now) and at most `PLACARD_EVENT_TIME_WINDOW_MS` (15 minutes by default) old; otherwise `400` and not stored. Reports count the event when it was received.',
        examples: ['2026-01-31T12:00:00.000Z'],
      }),
    ),
  },
  {
    $id: 'TrackingBody',
    examples: [{ campaignId: 123, placement: 'header_banner', location: 'US', device: 'mobile' }],
  },
);

export const Acknowledgement = Type.Object(
  { status: Type.Literal('success'), message: Type.String() },
  { $id: 'Acknowledgement', additionalProperties: false },
);

const rateLimitHeaders = {
  'Retry-After': { description: 'Whole seconds to wait (at least 1).', schema: { type: 'integer' } },
  'RateLimit-Policy': {
    description: 'IETF draft: the quota `q` (burst) per window `w` seconds, e.g. `"fetch";q=200;w=2`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF draft: remaining `r` and seconds `t` until a token is back, e.g. `"fetch";r=0;t=1`.',
    schema: { type: 'string' },
  },
};

const errorResponse = (description: string, example?: string, headers?: object) => ({
  description,
  ...(headers && { headers }),
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      ...(example !== undefined && { example: { status: 'error', message: example } }),
    },
  },
});

const COMMON_ERRORS = {
  '401': errorResponse(
    'Missing, malformed, unknown, revoked or expired key. An admin token gets the same body, and `WWW-Authenticate: Bearer error="invalid_token", error_description="this route takes a partner API key (plc_...), not an admin token"`.',
    'unauthorized',
  ),
  '403': errorResponse(
    'The key is suspended (`api key suspended`), or a valid key was sent by a browser (`api keys must only be used from a server`).',
    'api key suspended',
  ),
  '429': errorResponse(
    'Over the key’s rate limit, or too many failed authentications.',
    'Rate limit exceeded',
    rateLimitHeaders,
  ),
  '500': errorResponse('An unexpected fault.', 'internal server error'),
};

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe (D9): 1 to 255 visible ASCII characters, per API key, for 24 hours. A key stands for the request that first used it (kind, campaignId, placement, location and device, as normalised): the same request again is answered 200 and stored as a duplicate, never counted twice; a different request with the key is refused with 422 and not stored. Keys first used before the server kept their request match any request.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
};

function tracking(kind: 'impression' | 'click', message: string) {
  return {
    tags: ['Partner API'],
    operationId: kind === 'impression' ? 'trackImpression' : 'trackClick',
    summary: kind === 'impression' ? 'Track an impression' : 'Track a click',
    description:
      kind === 'impression'
        ? 'Report one impression per display, once the campaign is visible (partner API 4.2). Answered only after the event is durably stored. Every stored event gets a verdict (D15); the answer is the same whatever it is.'
        : 'Report a click for a genuine user action, then send the user to `destinationUrl` (partner API 4.3). Answered only after the event is durably stored. A click is billed only if it follows an unclicked impression of the same campaign and placement from the same API key within an hour (D15), or, with a `token`, that token’s impression; the answer is the same either way.',
    security: [{ apiKey: [] }],
    parameters: [idempotencyKey],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/TrackingBody' } } },
    },
    responses: {
      '200': {
        description: 'Stored.',
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Acknowledgement' },
            example: { status: 'success', message },
          },
        },
      },
      '400': errorResponse('A required field is missing or a value is invalid.', 'campaignId is required'),
      ...COMMON_ERRORS,
      '404': errorResponse('The campaign does not exist or is not running.', 'campaign not found'),
      '413': errorResponse('The body is over 16 KiB.', 'request body too large'),
      '415': errorResponse('The body is not `application/json`.', 'Content-Type must be application/json'),
      '422': errorResponse(
        'The Idempotency-Key was already used, within 24 hours, for a different request (another kind, campaign, placement, location or device). Nothing is stored; send a new key for a new event.',
        IDEMPOTENCY_KEY_REUSED_MESSAGE,
      ),
      '503': errorResponse(
        'The event could not be stored now; retry with the same Idempotency-Key.',
        'service unavailable',
        {
          'Retry-After': rateLimitHeaders['Retry-After'],
        },
      ),
    },
  };
}

const fetchCampaigns = {
  tags: ['Partner API'],
  operationId: 'fetchCampaigns',
  summary: 'Fetch campaigns for a placement',
  description:
    'Running campaigns for an ad slot, optionally narrowed by country and device (partner API 4.1, D2 to D4). Cache the answer for the `max-age` given. With `tokens=true`, each campaign carries a serve token for one page view (D15) and the answer is never cached.',
  security: [{ apiKey: [] }],
  parameters: [
    {
      name: 'placement',
      in: 'query',
      required: true,
      schema: { type: 'string', minLength: 1 },
      example: 'header_banner',
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    },
    {
      name: 'location',
      in: 'query',
      required: false,
      description: 'ISO 3166-1 alpha-2 country code.',
      schema: { type: 'string', pattern: '^[A-Za-z]{2}$' },
      example: 'US',
    },
    {
      name: 'device',
      in: 'query',
      required: false,
      description: deviceSchema.description,
      schema: { type: deviceSchema.type, enum: deviceSchema.enum },
      example: 'mobile',
    },
    {
      name: 'tokens',
      in: 'query',
      required: false,
      description:
        '`true`: every returned campaign also carries a `token` for this one page view, to send back with its impression and click (D15), and the answer is not to be reused (`Cache-Control: private, no-store`). Absent or `false`: the contract’s fields only.',
      // A boolean in the query is the word `true` or `false` (OpenAPI's form style), exactly what
      // the server takes; generated clients then take `tokens: true`.
      schema: { type: 'boolean', default: false },
    },
    {
      name: 'viewer',
      in: 'query',
      required: false,
      description:
        'The partner’s own pseudonymous id for the end user (D20), 1 to 128 characters: a first-party id of its own making, never an e-mail address or a raw account number. Only campaigns with frequency caps read it: their impressions past a cap for this viewer are stored `past frequency cap` and not billed, and fetch leaves out the campaigns the viewer has reached. Without it no frequency cap applies. Placard keeps only a keyed hash of it per partner, in memory or Redis, for at most the longest cap’s window; it never stores or logs the value sent. An answer for a viewer is that viewer’s (`Cache-Control: private, no-store`).',
      schema: { type: 'string', minLength: 1, maxLength: MAX_VIEWER_LENGTH },
      example: 'u-7f3a9c',
    },
  ],
  responses: {
    '200': {
      description: 'The matching campaigns (possibly none).',
      headers: {
        'Cache-Control': {
          description:
            'How long the answer may be reused, e.g. `private, max-age=30`; `private, no-store` with `tokens=true`.',
          schema: { type: 'string' },
        },
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/FetchResponse' } } },
    },
    '400': errorResponse(
      '`placement` is missing, a value is invalid, a parameter is given twice, or the query has more than 100 parameters.',
      'placement parameter is required',
    ),
    ...COMMON_ERRORS,
    '503': errorResponse(
      'The instance is shutting down: retry after `Retry-After` seconds, on a new connection.',
      'service unavailable',
      { 'Retry-After': rateLimitHeaders['Retry-After'] },
    ),
  },
};

/**
 * HEAD on fetch is served as GET is (Node's HTTP server sends no body for it): the same checks and
 * statuses, with the headers only.
 */
const fetchCampaignsHead = {
  ...fetchCampaigns,
  operationId: 'fetchCampaignsHead',
  summary: 'Fetch campaigns for a placement, headers only',
  description: 'As `GET`, without a body: the same checks, statuses and headers.',
  responses: Object.fromEntries(
    Object.entries(fetchCampaigns.responses).map(([status, { content: _content, ...response }]) => [
      status,
      response,
    ]),
  ),
};

/** The `paths` of the partner API, in OpenAPI 3.1 form. */
export const PARTNER_PATHS = {
  '/api/v1/campaigns/fetch': { get: fetchCampaigns, head: fetchCampaignsHead },
  '/api/v1/campaigns/impression': { post: tracking('impression', 'Impression tracked successfully') },
  '/api/v1/campaigns/click': { post: tracking('click', 'Click tracked successfully') },
};

export const PARTNER_SCHEMAS = [Campaign, FetchResponse, TrackingBody, Acknowledgement];
