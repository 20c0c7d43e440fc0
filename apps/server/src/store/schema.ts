import type { Generated, Kysely, Transaction } from 'kysely';

/**
 * Table shapes shared by both engines. Times are epoch milliseconds (UTC) in a 64-bit integer
 * column, booleans are 0/1 and small value sets are JSON text, so that SQLite and PostgreSQL
 * return identical rows and one contract test suite can hold both to the same behaviour.
 */
export interface Database {
  placements: PlacementTable;
  advertisers: AdvertiserTable;
  campaigns: CampaignTable;
  campaign_prices: CampaignPriceTable;
  partner_revenue_shares: PartnerRevenueShareTable;
  partner_earnings: PartnerEarningsTable;
  /** Views: the tables plus, on SQLite, what `event_rollup_deltas` charged since the last fold; what readers use. */
  campaign_prices_live: CampaignPriceTable;
  partner_earnings_live: PartnerEarningsTable;
  campaign_placements: CampaignPlacementTable;
  partners: PartnerTable;
  api_keys: ApiKeyTable;
  events: EventTable;
  idempotency_keys: IdempotencyKeyTable;
  /** SQLite: where retention's passes found the table's largest rowid (migration 032). */
  idempotency_key_marks: IdempotencyKeyMarkTable;
  event_rollups: EventRollupTable;
  /** SQLite: rollup rows appended by batches, not yet folded into `event_rollups` (migration 024). */
  event_rollup_deltas: EventRollupDeltaTable;
  /** A view: `event_rollups` and, on SQLite, `event_rollup_deltas`; what every reader sums. */
  event_rollups_live: EventRollupTable;
  campaign_rollups: CampaignRollupTable;
  campaign_delivery: CampaignDeliveryTable;
  change_versions: ChangeVersionTable;
  campaign_changes: CampaignChangeTable;
  meta: MetaTable;
  api_key_usage: ApiKeyUsageTable;
  campaign_counters: CampaignCounterTable;
  advertiser_spend: AdvertiserSpendTable;
  admin_tokens: AdminTokenTable;
  audit_log: AuditLogTable;
  users: UserTable;
  user_links: UserLinkTable;
  sessions: SessionTable;
  key_flags: KeyFlagTable;
  statement_months: StatementMonthTable;
  statements: StatementTable;
  statement_lines: StatementLineTable;
  statement_adjustments: StatementAdjustmentTable;
  statement_payments: StatementPaymentTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_messages: WebhookMessageTable;
  webhook_attempts: WebhookAttemptTable;
  webhook_key_expiry_notices: WebhookKeyExpiryNoticeTable;
}

export interface PlacementTable {
  id: string;
  description: string;
  enabled: number;
  created_at: number;
}

export interface AdvertiserTable {
  id: Generated<number>;
  name: string;
  created_at: number;
  updated_at: Generated<number>;
  /** Spend budgets in micros of all its campaigns (migration 022): in total, and each billing month; null: none. */
  budget_total_micros: number | null;
  budget_monthly_micros: number | null;
  /** Who sets its campaigns' prices (migration 023): 'operator' (the default) or 'advertiser'. */
  pricing: Generated<string>;
}

export interface CampaignTable {
  id: Generated<number>;
  advertiser_id: number;
  title: string;
  description: string | null;
  category: string | null;
  destination_url: string;
  status: string;
  priority: number;
  weight: number;
  /** JSON array of ISO 3166-1 alpha-2 codes; [] = every country. */
  countries: string;
  /** JSON array of device types; [] = every device. */
  devices: string;
  start_at: number | null;
  end_at: number | null;
  created_at: number;
  updated_at: number;
  /** IANA time zone for daily caps. */
  time_zone: Generated<string>;
  cap_impressions_total: number | null;
  cap_clicks_total: number | null;
  cap_impressions_daily: number | null;
  cap_clicks_daily: number | null;
  /** `asap` or `even` (D16). */
  pacing: Generated<string>;
  /** Frequency caps (D20): a JSON array of `{ impressions, per }`, '[]' for none. */
  frequency_caps: Generated<string>;
  /** Dayparting: the hours of the week it may run, as the API's JSON (`{"mon": [[9, 17]]}`); null: every hour. */
  schedule: string | null;
  /** Set when a daily cap is reached: not served before this instant (the next local midnight). */
  capped_until: number | null;
  rejection_reason: string | null;
  /** `cpm`, `cpc` or `flat` (D18); null with `price_micros` for a house campaign (migration 020). */
  price_model: string | null;
  price_micros: number | null;
  /** Spend budgets in micros (migration 020): the whole flight, and each local day; null: none. */
  budget_total_micros: number | null;
  budget_daily_micros: number | null;
  /** Set when its advertiser's budget is spent (migration 022): not served before this instant. */
  budget_held_until: number | null;
}

/**
 * Every price a campaign has had (migration 020), the newest in force: from when, set by whom, and
 * the billable units charged at it with their cost (each CPM run is priced from `billed`).
 */
export interface CampaignPriceTable {
  id: Generated<number>;
  campaign_id: number;
  since: number;
  model: string | null;
  amount_micros: number | null;
  actor: string;
  billed: Generated<number>;
  spend_micros: Generated<number>;
}

/** A partner's revenue share from an instant on (migration 020): the newest started is in force. */
export interface PartnerRevenueShareTable {
  id: Generated<number>;
  partner_id: number;
  effective_from: number;
  basis_points: number;
  actor: string;
  created_at: number;
}

/** The spend and earnings of one partner under one price and one share: earnings' no-loss counter. */
export interface PartnerEarningsTable {
  price_id: number;
  partner_id: number;
  share_id: number;
  spend_micros: Generated<number>;
  earnings_micros: Generated<number>;
}

export interface CampaignPlacementTable {
  campaign_id: number;
  placement_id: string;
}

export interface PartnerTable {
  id: Generated<number>;
  name: string;
  created_at: number;
  updated_at: Generated<number>;
  /** JSON array of categories this partner never receives. */
  blocked_categories: Generated<string>;
  /** JSON array of the ids of advertisers this partner never receives (migration 027). */
  blocked_advertisers: Generated<string>;
}

export interface ApiKeyTable {
  id: Generated<number>;
  partner_id: number;
  label: string | null;
  display_prefix: string;
  /** Hex SHA-256 of the plaintext key; the plaintext is never stored. */
  digest: string;
  status: string;
  created_at: number;
  revoked_at: number | null;
  /** After rotation the old key keeps working until this instant. */
  expires_at: number | null;
  suspended_reason: string | null;
  suspended_at: number | null;
  /** Per-key rate limits (requests per second and burst); null means the service default. */
  fetch_rate: number | null;
  fetch_burst: number | null;
  events_rate: number | null;
  events_burst: number | null;
}

export interface EventTable {
  id: Generated<number>;
  kind: string;
  campaign_id: number;
  placement_id: string;
  country: string | null;
  device: string | null;
  partner_id: number;
  api_key_id: number;
  occurred_at: number;
  verdict: string;
  reason: string | null;
  idempotency_key: string | null;
  /** The end user's address truncated to its IPv4 /24 or IPv6 /48 (D15); null when not sent. */
  user_address: string | null;
  /** When the partner says the event happened (`occurredAt`, D15); null when it did not say. */
  event_at: number | null;
  /** What the event cost, in micros, fixed in its batch's commit (D18); 0 when not billable. */
  cost_micros: Generated<number>;
  /** What the event earned its partner, in micros, fixed with its cost (D18). */
  earnings_micros: Generated<number>;
}

/** (API key, Idempotency-Key) pairs seen in the last 24 hours (D9). */
export interface IdempotencyKeyTable {
  api_key_id: number;
  key: string;
  created_at: number;
  /** The claiming request (`requestFingerprint`); null for keys claimed before it was kept. */
  fingerprint: string | null;
}

/**
 * SQLite: a retention pass started at `at`, and the largest rowid of `idempotency_keys` as it
 * ended; the keys up to it were created by `at`, but for those stored while the pass ran.
 */
export interface IdempotencyKeyMarkTable {
  at: number;
  last_rowid: number;
}

/** Per-minute event counts by every report dimension; '' stands for an absent country or device. */
export interface EventRollupTable {
  minute: number;
  campaign_id: number;
  partner_id: number;
  placement_id: string;
  country: string;
  device: string;
  kind: string;
  verdict: string;
  /** Why the events are not billable (D15); '' for `counted`. */
  reason: string;
  count: number;
  /** The events' summed cost and partner earnings in micros (migration 020). */
  spend_micros: Generated<number>;
  earnings_micros: Generated<number>;
  /** How many of the events named a viewer (D20, migration 029). */
  with_viewer: Generated<number>;
}

/**
 * SQLite: a rollup row a batch appended (migration 024), with the price its events were charged at
 * and the revenue share they earned their partner under (migration 031: null where none), which the
 * fold adds to `campaign_prices` and `partner_earnings`.
 */
export interface EventRollupDeltaTable extends EventRollupTable {
  /** The rowid: with the count of folds in `meta`, how a connection tells the rows it knows. */
  id: Generated<number>;
  price_id: number | null;
  share_id: number | null;
}

/**
 * `event_rollups` summed by campaign and quarter hour, for the quarter hours before the `meta` key
 * `rollups_compacted_before` (migration 013): what reports of weeks read.
 */
export interface CampaignRollupTable {
  campaign_id: number;
  /** Start of the quarter hour, epoch ms. */
  slot: number;
  kind: string;
  verdict: string;
  count: number;
  spend_micros: Generated<number>;
  earnings_micros: Generated<number>;
  /** How many of the events named a viewer (D20, migration 029). */
  with_viewer: Generated<number>;
}

/**
 * Each campaign's counted impressions and clicks in `campaign_rollups` (migration 018), kept by
 * triggers on that table: its delivery up to the `meta` key `rollups_compacted_before`.
 */
export interface CampaignDeliveryTable {
  campaign_id: number;
  impressions: Generated<number>;
  clicks: Generated<number>;
  spend_micros: Generated<number>;
}

/** Bumped by triggers on every write to a watched table; instances poll it to refresh their index. */
export interface ChangeVersionTable {
  topic: string;
  version: number;
}

/** Which campaign each bump of the `campaigns` version was for (migration 011). */
export interface CampaignChangeTable {
  version: number;
  campaign_id: number;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface ApiKeyUsageTable {
  api_key_id: number;
  last_used_at: number;
  /** Requests refused for browser signals (partner API 1.5). */
  browser_requests: Generated<number>;
  last_browser_request_at: number | null;
}

export interface CampaignCounterTable {
  campaign_id: number;
  /** Local date `YYYY-MM-DD` in the campaign's time zone, or `total`. */
  day: string;
  impressions: number;
  clicks: number;
  /** Billable spend in micros (migration 020): what budgets count. */
  spend_micros: Generated<number>;
}

/** An advertiser's spend while it has a budget (migration 022): in total and per billing month. */
export interface AdvertiserSpendTable {
  advertiser_id: number;
  /** `total`, or a billing month `YYYY-MM` (`PLACARD_BILLING_TIME_ZONE`). */
  period: string;
  spend_micros: number;
}

export interface AdminTokenTable {
  id: Generated<number>;
  digest: string;
  display_prefix: string;
  label: string;
  /** `operator`, `advertiser:<id>` or `partner:<id>`: the account the token acts for. */
  scope: Generated<string>;
  /** `admin`, `manager` or `reporter` in that account. */
  role: Generated<string>;
  created_at: number;
  revoked_at: number | null;
  /** The token stops working at this instant; null: never. */
  expires_at: number | null;
  /** Written at most once a minute per token (see services/admin-tokens.ts). */
  last_used_at: number | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  /** Who: `admin:<token id>`, `cli` or `system`. */
  actor: string;
  object_type: string;
  object_id: string;
  action: string;
  reason: string | null;
  /** JSON of the object before and after the change; null where it did not exist. */
  before: string | null;
  after: string | null;
}

/** A key whose traffic looks fraudulent or broken (D15, migration 014), and its review. */
export interface KeyFlagTable {
  id: Generated<number>;
  api_key_id: number;
  partner_id: number;
  /** `ctr`, `burst` or `clicks without impressions`. */
  signal: string;
  /** JSON: the figures, the window and the thresholds of the latest finding. */
  evidence: string;
  created_at: number;
  /** When the evidence was last updated (a flag still open is updated, not raised again). */
  updated_at: number;
  /** `open`, `dismissed` or `suspended`. */
  status: string;
  reviewed_at: number | null;
  /** The audit actor who reviewed it (`system` for the automatic policy). */
  reviewed_by: string | null;
  review_note: string | null;
}

/** The database, or a transaction on it: what every query runs on. */
export type Db = Kysely<Database> | Transaction<Database>;

/** A person with a role in one account (D13); no password until an invitation is accepted. */
export interface UserTable {
  id: Generated<number>;
  email: string;
  account_kind: string;
  /** The advertiser's or partner's id; null for the operator. */
  account_id: number | null;
  role: string;
  /** argon2id, in its encoded form (parameters and salt included); null until set. */
  password_hash: string | null;
  created_at: number;
  password_changed_at: number | null;
  disabled_at: number | null;
}

/** A one-time link (an invitation or a password reset), stored as the digest of its secret. */
export interface UserLinkTable {
  id: Generated<number>;
  digest: string;
  user_id: number;
  purpose: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A signed-in browser, stored as the digest of its cookie's secret. */
export interface SessionTable {
  id: Generated<number>;
  digest: string;
  user_id: number;
  created_at: number;
  last_seen_at: number;
  /** The absolute end (12 hours after sign-in); the idle end is computed from last_seen_at. */
  expires_at: number;
  ended_at: number | null;
  user_agent: string | null;
}

/** Each month issued (migration 021); this and the statement tables below are insert-only. */
export interface StatementMonthTable {
  month: string;
  issued_at: number;
  issued_by: string;
}

/** One account's statement of one month (D18), fixed when issued. */
export interface StatementTable {
  id: Generated<number>;
  kind: string;
  account_id: number;
  account_name: string;
  month: string;
  period_start: number;
  period_end: number;
  currency: string;
  issued_at: number;
  issued_by: string;
  subtotal_micros: number;
  adjustments_micros: number;
  opening_balance_micros: number;
  total_micros: number;
  payable_micros: number;
  carried_forward_micros: number;
}

export interface StatementLineTable {
  id: Generated<number>;
  statement_id: number;
  /** `campaign`, `flat`, `placement_key` or `adjustment`. */
  kind: string;
  campaign_id: number | null;
  campaign_name: string | null;
  placement_id: string | null;
  api_key_id: number | null;
  api_key_name: string | null;
  impressions: number;
  clicks: number;
  invalid_impressions: number;
  invalid_clicks: number;
  amount_micros: number;
  /** The adjustment an `adjustment` line carries: unique, so it is carried once. */
  adjustment_id: number | null;
  reason: string | null;
}

export interface StatementAdjustmentTable {
  id: Generated<number>;
  kind: string;
  account_id: number;
  amount_micros: number;
  reason: string;
  created_at: number;
  created_by: string;
}

export interface StatementPaymentTable {
  id: Generated<number>;
  statement_id: number;
  reference: string;
  paid_at: number;
  paid_by: string;
}

/** Webhook endpoints (migration 026): an account's URL, its event types and secrets, its delivery state. */
export interface WebhookEndpointTable {
  id: Generated<number>;
  /** `operator`, `advertiser:<id>` or `partner:<id>`. */
  account: string;
  url: string;
  description: Generated<string>;
  /** A JSON array of event types. */
  event_types: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  created_by: string;
  updated_at: number;
  next_attempt_at: Generated<number>;
  failures: Generated<number>;
  failing_since: number | null;
  claimed_until: Generated<number>;
  claimed_by: string | null;
  disabled_at: number | null;
  disabled_reason: string | null;
}

/** The webhook outbox (migration 026): one row per endpoint and event. */
export interface WebhookMessageTable {
  id: Generated<number>;
  message_id: string;
  endpoint_id: number;
  event_type: string;
  payload: string;
  created_at: number;
  attempts: Generated<number>;
  delivered_at: number | null;
}

/** Every webhook delivery attempt (migration 026). */
export interface WebhookAttemptTable {
  id: Generated<number>;
  message_id: number;
  endpoint_id: number;
  at: number;
  status: number | null;
  duration_ms: number;
  answer: Generated<string>;
  error: string | null;
  instance: string;
}

/** The keys whose `key.expiring` webhook was written, for the expiry it was written for (migration 026). */
export interface WebhookKeyExpiryNoticeTable {
  api_key_id: number;
  expires_at: number;
}
