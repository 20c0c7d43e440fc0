// Monthly statements (D18): the months issued, each account's statement with its lines, adjustments
// and payments, in tables rows are only added to (migration 021's triggers refuse the rest); and the
// month's figures they are issued from. Part of the Store façade (store.ts): functions over a StoreContext.
import { micros, type Micros } from '../domain/money.js';
import type { StoreContext } from './context.js';
import { insertRow } from './table-rows.js';

export type StatementAccountKind = 'advertiser' | 'partner';

export interface StatementRecord {
  id: number;
  kind: StatementAccountKind;
  accountId: number;
  accountName: string;
  month: string;
  periodStart: number;
  periodEnd: number;
  currency: string;
  issuedAt: number;
  issuedBy: string;
  subtotalMicros: Micros;
  adjustmentsMicros: Micros;
  openingBalanceMicros: Micros;
  totalMicros: Micros;
  payableMicros: Micros;
  carriedForwardMicros: Micros;
}

export interface StatementLineRecord {
  kind: 'campaign' | 'flat' | 'placement_key' | 'adjustment';
  campaignId: number | null;
  campaignName: string | null;
  placementId: string | null;
  apiKeyId: number | null;
  apiKeyName: string | null;
  impressions: number;
  clicks: number;
  invalidImpressions: number;
  invalidClicks: number;
  amountMicros: Micros;
  /** Adjustment lines only. */
  adjustmentId: number | null;
  reason: string | null;
}

export interface AdjustmentRecord {
  id: number;
  kind: StatementAccountKind;
  accountId: number;
  amountMicros: Micros;
  reason: string;
  createdAt: number;
  createdBy: string;
  /** The statement whose line carries it; null until the account's next statement is issued. */
  carriedOnStatementId: number | null;
}

export interface PaymentRecord {
  statementId: number;
  reference: string;
  paidAt: number;
  paidBy: string;
}

const num = (value: number | string | bigint | null): number => Number(value ?? 0);
const optional = (value: number | string | null): number | null => (value === null ? null : Number(value));

/** The months issued, oldest first. */
export async function issuedMonths(ctx: StoreContext): Promise<string[]> {
  const rows = await ctx.db.selectFrom('statement_months').select('month').orderBy('month').execute();
  return rows.map((row) => row.month);
}

/** Records `month` as issued; a second time fails on its key, as issuing it twice must. */
export async function recordIssuedMonth(
  ctx: StoreContext,
  month: { month: string; issuedAt: number; issuedBy: string },
): Promise<void> {
  await ctx.db
    .insertInto('statement_months')
    .values({ month: month.month, issued_at: month.issuedAt, issued_by: month.issuedBy })
    .execute();
}

/** The first minute any event cost or earned anything (from the rollups, kept for good), or null. */
export async function firstChargedMinute(ctx: StoreContext): Promise<number | null> {
  const row = await ctx.db
    .selectFrom('event_rollups_live')
    .select((eb) => eb.fn.min('minute').as('minute'))
    .where((eb) => eb.or([eb('spend_micros', '!=', 0), eb('earnings_micros', '!=', 0)]))
    .executeTakeFirst();
  return row?.minute === null || row?.minute === undefined ? null : Number(row.minute);
}

/** A campaign that has had a flat price, with every price it has had, oldest first. */
export interface FlatCampaign {
  id: number;
  advertiserId: number;
  title: string;
  status: string;
  startAt: number | null;
  prices: { since: number; model: string | null; amountMicros: Micros | null }[];
}

/** Every campaign that has had a flat price at some time: the candidates for a flat line. */
export async function flatCampaigns(ctx: StoreContext): Promise<FlatCampaign[]> {
  const rows = await ctx.db
    .selectFrom('campaign_prices')
    .innerJoin('campaigns', 'campaigns.id', 'campaign_prices.campaign_id')
    .select([
      'campaigns.id',
      'campaigns.advertiser_id',
      'campaigns.title',
      'campaigns.status',
      'campaigns.start_at',
      'campaign_prices.since',
      'campaign_prices.model',
      'campaign_prices.amount_micros',
    ])
    .where('campaign_prices.campaign_id', 'in', (eb) =>
      eb.selectFrom('campaign_prices').select('campaign_id').where('model', '=', 'flat'),
    )
    .orderBy('campaign_prices.campaign_id')
    .orderBy('campaign_prices.id')
    .execute();
  const byId = new Map<number, FlatCampaign>();
  for (const row of rows) {
    const id = Number(row.id);
    let campaign = byId.get(id);
    if (campaign === undefined) {
      campaign = {
        id,
        advertiserId: Number(row.advertiser_id),
        title: row.title,
        status: row.status,
        startAt: optional(row.start_at),
        prices: [],
      };
      byId.set(id, campaign);
    }
    campaign.prices.push({
      since: Number(row.since),
      model: row.model,
      amountMicros: row.amount_micros === null ? null : micros(row.amount_micros),
    });
  }
  return [...byId.values()];
}

/** Counts and money of one group of events (or rollups) of a month, by kind and verdict. */
export interface MonthSlice {
  kind: string;
  verdict: string;
  count: number;
  /** Spend (campaign slices) or earnings (partner slices). */
  amount: Micros;
}

/** Each campaign's events of `[from, to)` from the per-minute rollups: counts and spend. */
export async function campaignMonth(
  ctx: StoreContext,
  from: number,
  to: number,
): Promise<(MonthSlice & { campaignId: number })[]> {
  const rows = await ctx.db
    .selectFrom('event_rollups_live')
    .select((eb) => [
      'campaign_id',
      'kind',
      'verdict',
      eb.fn.sum<number | string>('count').as('count'),
      eb.fn.sum<number | string>('spend_micros').as('amount'),
    ])
    .where('minute', '>=', from)
    .where('minute', '<', to)
    .groupBy(['campaign_id', 'kind', 'verdict'])
    .orderBy('campaign_id')
    .execute();
  return rows.map((row) => ({
    campaignId: Number(row.campaign_id),
    kind: row.kind,
    verdict: row.verdict,
    count: num(row.count),
    amount: micros(row.amount),
  }));
}

/**
 * Each partner's events of `[from, to)` by placement and API key, from the raw events (the rollups
 * have no key): counts and earnings.
 */
export async function partnerMonth(
  ctx: StoreContext,
  from: number,
  to: number,
): Promise<(MonthSlice & { partnerId: number; placementId: string; apiKeyId: number })[]> {
  const rows = await ctx.db
    .selectFrom('events')
    .select((eb) => [
      'partner_id',
      'placement_id',
      'api_key_id',
      'kind',
      'verdict',
      eb.fn.countAll<number | string>().as('count'),
      eb.fn.sum<number | string>('earnings_micros').as('amount'),
    ])
    .where('occurred_at', '>=', from)
    .where('occurred_at', '<', to)
    .groupBy(['partner_id', 'placement_id', 'api_key_id', 'kind', 'verdict'])
    .orderBy('partner_id')
    .orderBy('placement_id')
    .orderBy('api_key_id')
    .execute();
  return rows.map((row) => ({
    partnerId: Number(row.partner_id),
    placementId: row.placement_id,
    apiKeyId: Number(row.api_key_id),
    kind: row.kind,
    verdict: row.verdict,
    count: num(row.count),
    amount: micros(row.amount),
  }));
}

/** Events, spend and earnings of `[from, to)` by campaign and partner, from one table. */
interface MonthSums {
  key: string;
  count: number;
  spend: Micros;
  earnings: Micros;
}

async function sumsOf(ctx: StoreContext, table: 'events' | 'event_rollups_live', from: number, to: number) {
  const time = table === 'events' ? 'occurred_at' : 'minute';
  // Typed as `event_rollups_live`: the raw events have the same columns under these names but the
  // count (one row each), their cost and their time.
  const rows = await ctx.db
    .selectFrom(table as 'event_rollups_live')
    .select((eb) => [
      'campaign_id',
      'partner_id',
      table === 'events'
        ? eb.fn.countAll<number | string>().as('count')
        : eb.fn.sum<number | string>('count').as('count'),
      eb.fn
        .sum<number | string>((table === 'events' ? 'cost_micros' : 'spend_micros') as 'spend_micros')
        .as('spend'),
      eb.fn.sum<number | string>('earnings_micros').as('earnings'),
    ])
    .where(time as 'minute', '>=', from)
    .where(time as 'minute', '<', to)
    .groupBy(['campaign_id', 'partner_id'])
    .execute();
  const sums = new Map<string, MonthSums>();
  for (const row of rows) {
    const key = `campaign ${num(row.campaign_id)}, partner ${num(row.partner_id)}`;
    sums.set(key, { key, count: num(row.count), spend: micros(row.spend), earnings: micros(row.earnings) });
  }
  return sums;
}

/**
 * Where the raw events of `[from, to)` and their per-minute rollups disagree, by campaign and partner
 * (events, spend or earnings), in words; empty when they agree to the event and the micro.
 */
export async function monthDisagreements(ctx: StoreContext, from: number, to: number): Promise<string[]> {
  const [events, rollups] = await Promise.all([
    sumsOf(ctx, 'events', from, to),
    sumsOf(ctx, 'event_rollups_live', from, to),
  ]);
  const zero = (key: string): MonthSums => ({ key, count: 0, spend: 0 as Micros, earnings: 0 as Micros });
  const found: string[] = [];
  for (const key of new Set([...events.keys(), ...rollups.keys()])) {
    const raw = events.get(key) ?? zero(key);
    const rolled = rollups.get(key) ?? zero(key);
    if (raw.count !== rolled.count || raw.spend !== rolled.spend || raw.earnings !== rolled.earnings)
      found.push(
        `${key}: events ${raw.count} (spend ${raw.spend}, earnings ${raw.earnings} micros), ` +
          `rollups ${rolled.count} (spend ${rolled.spend}, earnings ${rolled.earnings} micros)`,
      );
  }
  return found;
}

function toStatement(row: {
  id: number | string;
  kind: string;
  account_id: number | string;
  account_name: string;
  month: string;
  period_start: number | string;
  period_end: number | string;
  currency: string;
  issued_at: number | string;
  issued_by: string;
  subtotal_micros: number | string;
  adjustments_micros: number | string;
  opening_balance_micros: number | string;
  total_micros: number | string;
  payable_micros: number | string;
  carried_forward_micros: number | string;
}): StatementRecord {
  return {
    id: Number(row.id),
    kind: row.kind as StatementAccountKind,
    accountId: Number(row.account_id),
    accountName: row.account_name,
    month: row.month,
    periodStart: Number(row.period_start),
    periodEnd: Number(row.period_end),
    currency: row.currency,
    issuedAt: Number(row.issued_at),
    issuedBy: row.issued_by,
    subtotalMicros: micros(row.subtotal_micros),
    adjustmentsMicros: micros(row.adjustments_micros),
    openingBalanceMicros: micros(row.opening_balance_micros),
    totalMicros: micros(row.total_micros),
    payableMicros: micros(row.payable_micros),
    carriedForwardMicros: micros(row.carried_forward_micros),
  };
}

/** Adds one statement with its lines; returns it as stored. */
export async function insertStatement(
  ctx: StoreContext,
  statement: Omit<StatementRecord, 'id'>,
  lines: readonly StatementLineRecord[],
): Promise<StatementRecord> {
  const row = await insertRow(ctx, 'statements', {
    kind: statement.kind,
    account_id: statement.accountId,
    account_name: statement.accountName,
    month: statement.month,
    period_start: statement.periodStart,
    period_end: statement.periodEnd,
    currency: statement.currency,
    issued_at: statement.issuedAt,
    issued_by: statement.issuedBy,
    subtotal_micros: statement.subtotalMicros,
    adjustments_micros: statement.adjustmentsMicros,
    opening_balance_micros: statement.openingBalanceMicros,
    total_micros: statement.totalMicros,
    payable_micros: statement.payableMicros,
    carried_forward_micros: statement.carriedForwardMicros,
  });
  const stored = toStatement(row);
  if (lines.length > 0)
    await ctx.db
      .insertInto('statement_lines')
      .values(
        lines.map((line) => ({
          statement_id: stored.id,
          kind: line.kind,
          campaign_id: line.campaignId,
          campaign_name: line.campaignName,
          placement_id: line.placementId,
          api_key_id: line.apiKeyId,
          api_key_name: line.apiKeyName,
          impressions: line.impressions,
          clicks: line.clicks,
          invalid_impressions: line.invalidImpressions,
          invalid_clicks: line.invalidClicks,
          amount_micros: line.amountMicros,
          adjustment_id: line.adjustmentId,
          reason: line.reason,
        })),
      )
      .execute();
  return stored;
}

/** Statements, oldest month first, then by kind and account. */
export async function listStatements(
  ctx: StoreContext,
  filter: { kind?: StatementAccountKind; accountId?: number; month?: string; id?: number },
): Promise<StatementRecord[]> {
  const rows = await ctx.db
    .selectFrom('statements')
    .selectAll()
    .$if(filter.id !== undefined, (q) => q.where('id', '=', filter.id!))
    .$if(filter.kind !== undefined, (q) => q.where('kind', '=', filter.kind!))
    .$if(filter.accountId !== undefined, (q) => q.where('account_id', '=', filter.accountId!))
    .$if(filter.month !== undefined, (q) => q.where('month', '=', filter.month!))
    .orderBy('month')
    .orderBy('kind')
    .orderBy('account_id')
    .execute();
  return rows.map(toStatement);
}

/** An account's latest statement (its balance carried forward opens the next), or undefined. */
export async function latestStatement(
  ctx: StoreContext,
  kind: StatementAccountKind,
  accountId: number,
): Promise<StatementRecord | undefined> {
  const row = await ctx.db
    .selectFrom('statements')
    .selectAll()
    .where('kind', '=', kind)
    .where('account_id', '=', accountId)
    .orderBy('month', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : toStatement(row);
}

/** A statement's lines, in the order they were issued. */
export async function statementLines(ctx: StoreContext, statementId: number): Promise<StatementLineRecord[]> {
  const rows = await ctx.db
    .selectFrom('statement_lines')
    .selectAll()
    .where('statement_id', '=', statementId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    kind: row.kind as StatementLineRecord['kind'],
    campaignId: optional(row.campaign_id),
    campaignName: row.campaign_name,
    placementId: row.placement_id,
    apiKeyId: optional(row.api_key_id),
    apiKeyName: row.api_key_name,
    impressions: num(row.impressions),
    clicks: num(row.clicks),
    invalidImpressions: num(row.invalid_impressions),
    invalidClicks: num(row.invalid_clicks),
    amountMicros: micros(row.amount_micros),
    adjustmentId: optional(row.adjustment_id),
    reason: row.reason,
  }));
}

/** Records an adjustment on an account. */
export async function addAdjustment(
  ctx: StoreContext,
  adjustment: Omit<AdjustmentRecord, 'id' | 'carriedOnStatementId'>,
): Promise<AdjustmentRecord> {
  const row = await insertRow(ctx, 'statement_adjustments', {
    kind: adjustment.kind,
    account_id: adjustment.accountId,
    amount_micros: adjustment.amountMicros,
    reason: adjustment.reason,
    created_at: adjustment.createdAt,
    created_by: adjustment.createdBy,
  });
  return { ...adjustment, id: Number(row.id), carriedOnStatementId: null };
}

/**
 * Adjustments, oldest first, each with the statement that carries it; `pending` only those not
 * carried yet.
 */
export async function listAdjustments(
  ctx: StoreContext,
  filter: { kind?: StatementAccountKind; accountId?: number; pending?: boolean },
): Promise<AdjustmentRecord[]> {
  const rows = await ctx.db
    .selectFrom('statement_adjustments as a')
    .leftJoin('statement_lines as l', 'l.adjustment_id', 'a.id')
    .selectAll('a')
    .select('l.statement_id')
    .$if(filter.kind !== undefined, (q) => q.where('a.kind', '=', filter.kind!))
    .$if(filter.accountId !== undefined, (q) => q.where('a.account_id', '=', filter.accountId!))
    .$if(filter.pending === true, (q) => q.where('l.statement_id', 'is', null))
    .orderBy('a.id')
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind as StatementAccountKind,
    accountId: Number(row.account_id),
    amountMicros: micros(row.amount_micros),
    reason: row.reason,
    createdAt: Number(row.created_at),
    createdBy: row.created_by,
    carriedOnStatementId: optional(row.statement_id),
  }));
}

/** Records a statement paid; a second payment of it fails on its key. */
export async function addPayment(ctx: StoreContext, payment: PaymentRecord): Promise<void> {
  await ctx.db
    .insertInto('statement_payments')
    .values({
      statement_id: payment.statementId,
      reference: payment.reference,
      paid_at: payment.paidAt,
      paid_by: payment.paidBy,
    })
    .execute();
}

/** The payments of these statements, by statement. */
export async function paymentsOf(
  ctx: StoreContext,
  statementIds: readonly number[],
): Promise<Map<number, PaymentRecord>> {
  if (statementIds.length === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('statement_payments')
    .selectAll()
    .where('statement_id', 'in', statementIds)
    .execute();
  return new Map(
    rows.map((row) => [
      Number(row.statement_id),
      {
        statementId: Number(row.statement_id),
        reference: row.reference,
        paidAt: Number(row.paid_at),
        paidBy: row.paid_by,
      },
    ]),
  );
}
