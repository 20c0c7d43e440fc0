import { alreadyDone, DomainError, invalidField, notFound } from '../domain/errors.js';
import { addMicros, MAX_MICROS, micros, MIN_MICROS, sumMicros, type Micros } from '../domain/money.js';
import { moneyFigure } from '../domain/money-rates.js';
import { statementTotals } from '../domain/statement-totals.js';
import { checkMonth, monthOf, monthPeriod, monthsBetween, nextMonth } from '../domain/statement-months.js';
import type {
  AdjustmentRecord,
  FlatCampaign,
  StatementLineRecord,
  StatementRecord,
  Store,
} from '../store/store.js';
import { isDataError } from '../store/errors.js';
import { audit, CLI_ACTOR, type Actor } from './audit.js';
import { csvText } from './report-format.js';
import { requireOperator, sees } from './scope.js';
import type {
  AdjustmentView,
  StatementKind,
  StatementLineView,
  StatementMonthView,
  StatementSummaryView,
  StatementView,
} from './statement-views.js';
import { trimmedText } from './text-field.js';

const KINDS: readonly StatementKind[] = ['advertiser', 'partner'];

/** Campaigns never approved: a flat price is billed only for a campaign that went past review. */
const NEVER_APPROVED: readonly string[] = ['draft', 'pending_review', 'rejected'];

/** A write that may happen once (its key refuses a second): a second one is a 409 saying `done`. */
async function once(write: Promise<void>, done: string): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (isDataError(error)) throw alreadyDone(done);
    throw error;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function checkKind(value: unknown, field = 'kind'): StatementKind {
  if (!KINDS.includes(value as StatementKind)) throw invalidField(field, 'must be advertiser or partner');
  return value as StatementKind;
}

function checkAccountId(value: unknown, field = 'accountId'): number {
  const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    throw invalidField(field, 'must be the id of an advertiser or a partner');
  return id;
}

/** A signed amount of an adjustment, in micros: a whole number, not zero. */
function checkAdjustmentAmount(value: unknown): Micros {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value === 0)
    throw invalidField('amountMicros', 'must be a whole number of micros, not 0 (negative to credit)');
  if (value > MAX_MICROS || value < MIN_MICROS)
    throw invalidField('amountMicros', `must be between ${MIN_MICROS} and ${MAX_MICROS}`);
  return micros(value);
}

/** The price a flat campaign's flight starts at, and when: the newest set by then (else its first). */
function flatCharge(campaign: FlatCampaign): { at: number; amount: Micros } | null {
  if (NEVER_APPROVED.includes(campaign.status)) return null;
  const at = campaign.startAt ?? campaign.prices[0]!.since;
  const price = campaign.prices.findLast((p) => p.since <= at) ?? campaign.prices[0]!;
  return price.model === 'flat' && price.amountMicros !== null ? { at, amount: price.amountMicros } : null;
}

/** A statement line with nothing in it but what the given fields say. */
const line = (
  fields: Partial<StatementLineRecord> & Pick<StatementLineRecord, 'kind'>,
): StatementLineRecord => ({
  campaignId: null,
  campaignName: null,
  placementId: null,
  apiKeyId: null,
  apiKeyName: null,
  impressions: 0,
  clicks: 0,
  invalidImpressions: 0,
  invalidClicks: 0,
  amountMicros: 0 as Micros,
  adjustmentId: null,
  reason: null,
  ...fields,
});

/** Adds a slice of events (counts by kind and verdict, an amount) to a line. */
function addSlice(
  target: StatementLineRecord,
  slice: { kind: string; verdict: string; count: number; amount: Micros },
) {
  const valid = slice.verdict === 'counted';
  if (slice.kind === 'impression') {
    if (valid) target.impressions += slice.count;
    else target.invalidImpressions += slice.count;
  } else if (valid) target.clicks += slice.count;
  else target.invalidClicks += slice.count;
  target.amountMicros = addMicros(target.amountMicros, slice.amount);
}

/** An account's statement of a month before it is stored: its lines and what it carries. */
interface Draft {
  kind: StatementKind;
  accountId: number;
  lines: StatementLineRecord[];
  adjustments: AdjustmentRecord[];
  openingBalance: Micros;
}

/**
 * Monthly statements (D18): the operator issues every advertiser's and partner's statement of a
 * closed month at once, in order, from the events' figures; an issued statement never changes (its
 * tables refuse it), corrections are adjustments carried on the account's next statement, and a
 * partner statement with something payable is marked paid once. Advertisers' and partners' people
 * and tokens read their own statements and adjustments.
 */
export class StatementService {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor = CLI_ACTOR,
    private readonly clock: () => number = Date.now,
    /** `PLACARD_BILLING_TIME_ZONE`: statements are of its calendar months. */
    readonly billingTimeZone = 'UTC',
    /** `PLACARD_CURRENCY`. */
    readonly currency = 'USD',
    /** `PLACARD_MINIMUM_PAYOUT` in micros. */
    readonly minimumPayoutMicros: Micros = 0 as Micros,
  ) {}

  /** The months money has been recorded in, and the issued ones: each closed or not, issued or not. */
  private async monthList(store: Store, now: number): Promise<StatementMonthView[]> {
    const issued = await store.issuedMonths();
    const firstMinute = await store.firstChargedMinute();
    const starts = [
      ...(firstMinute === null ? [] : [monthOf(firstMinute, this.billingTimeZone)]),
      ...(await store.flatCampaigns()).flatMap((campaign) => {
        const charge = flatCharge(campaign);
        return charge === null ? [] : [monthOf(charge.at, this.billingTimeZone)];
      }),
      ...issued.slice(0, 1),
    ].sort();
    if (starts.length === 0) return [];
    const current = monthOf(now, this.billingTimeZone);
    const last = issued.at(-1);
    // Months follow the last issued one; before any is issued, the first with money comes first.
    const next = last === undefined ? starts[0]! : nextMonth(last);
    return monthsBetween(starts[0]!, current > next ? current : next).map((month) => {
      const closed = monthPeriod(month, this.billingTimeZone).end <= now;
      return { month, closed, issued: issued.includes(month), nextToIssue: closed && month === next };
    });
  }

  /** The months since money was first recorded, through this one: closed or not, issued or not. */
  months(): Promise<StatementMonthView[]> {
    return this.monthList(this.store, this.clock());
  }

  /**
   * Issues every advertiser's and partner's statement of `month` (`YYYY-MM`), in one transaction: a
   * closed month, the next one after the last issued (409 naming the month to issue first), whose raw
   * events agree with their rollups to the event and the micro (409 otherwise, e.g. once retention has
   * removed them). An account with no money, no adjustment and no balance gets none that month.
   */
  async issue(monthInput: unknown): Promise<StatementSummaryView[]> {
    requireOperator(this.actor, 'issue statements');
    const month = checkMonth(monthInput);
    const now = this.clock();
    const { start, end } = monthPeriod(month, this.billingTimeZone);
    return this.store.transaction(async (tx) => {
      const issuedMonths = await tx.issuedMonths();
      if (issuedMonths.includes(month)) throw alreadyDone(`the statements of ${month} were issued already`);
      if (end > now)
        throw new DomainError(
          'conflict',
          `${month} has not closed: it ends at ${iso(end)} (${this.billingTimeZone}); statements are issued for closed months`,
        );
      const last = issuedMonths.at(-1);
      // The month after the last issued; before any is, the first with money (any, when there is none).
      const expected = last === undefined ? (await this.monthList(tx, now))[0]?.month : nextMonth(last);
      if (last !== undefined && month < last)
        throw new DomainError(
          'conflict',
          `${month} comes before ${last}, the last month issued: months are issued in order`,
        );
      if (expected !== undefined && month !== expected)
        throw new DomainError(
          'conflict',
          `issue ${expected} first: months are issued in order, each after the one before it`,
        );
      // Recorded first: of two issuing the month at once, the second waits here and is refused.
      await once(
        tx.recordIssuedMonth({ month, issuedAt: now, issuedBy: this.actor.id }),
        `the statements of ${month} were issued already`,
      );
      const disagreements = await tx.monthDisagreements(start, end);
      if (disagreements.length > 0)
        throw new DomainError(
          'conflict',
          `the statements of ${month} are not issued: its raw events and their per-minute rollups disagree ` +
            `(${disagreements.slice(0, 3).join('; ')}${disagreements.length > 3 ? '; …' : ''}); ` +
            'raw events of that month may have been removed by retention (PLACARD_EVENT_RETENTION_DAYS)',
        );
      const drafts = await this.drafts(tx, start, end, last);
      const issuedBy = this.actor.id;
      const issued: StatementRecord[] = [];
      for (const draft of drafts) {
        const subtotal = sumMicros(draft.lines.map((l) => l.amountMicros));
        const adjustments = sumMicros(draft.adjustments.map((a) => a.amountMicros));
        const { total, payable, carriedForward } = statementTotals(
          draft.kind,
          { subtotal, adjustments, openingBalance: draft.openingBalance },
          this.minimumPayoutMicros,
        );
        const accountName = await this.accountName(tx, draft.kind, draft.accountId);
        const lines = [
          ...draft.lines,
          ...draft.adjustments.map((a) =>
            line({ kind: 'adjustment', amountMicros: a.amountMicros, adjustmentId: a.id, reason: a.reason }),
          ),
        ];
        issued.push(
          await tx.insertStatement(
            {
              kind: draft.kind,
              accountId: draft.accountId,
              accountName,
              month,
              periodStart: start,
              periodEnd: end,
              currency: this.currency,
              issuedAt: now,
              issuedBy,
              subtotalMicros: subtotal,
              adjustmentsMicros: adjustments,
              openingBalanceMicros: draft.openingBalance,
              totalMicros: total,
              payableMicros: payable,
              carriedForwardMicros: carriedForward,
            },
            lines,
          ),
        );
      }
      await audit(
        tx,
        this.actor,
        {
          objectType: 'statement',
          objectId: month,
          action: 'issue_statements',
          before: null,
          after: { month, statements: issued.map((s) => s.id) },
        },
        now,
      );
      return issued.map((statement) => this.summary(statement, undefined));
    });
  }

  private async accountName(store: Store, kind: StatementKind, id: number): Promise<string> {
    const account = kind === 'advertiser' ? await store.findAdvertiser(id) : await store.findPartner(id);
    return account?.name ?? `${kind} ${id}`;
  }

  /** Every account's statement of `[start, end)` before it is stored, after those of `lastMonth`. */
  private async drafts(
    tx: Store,
    start: number,
    end: number,
    lastMonth: string | undefined,
  ): Promise<Draft[]> {
    const drafts = new Map<string, Draft>();
    const draftOf = (kind: StatementKind, accountId: number): Draft => {
      const key = `${kind}:${accountId}`;
      let draft = drafts.get(key);
      if (draft === undefined) {
        draft = { kind, accountId, lines: [], adjustments: [], openingBalance: 0 as Micros };
        drafts.set(key, draft);
      }
      return draft;
    };

    // Advertisers: each campaign's events from the rollups, then flat campaigns starting this month.
    const slices = await tx.campaignMonth(start, end);
    const campaigns = new Map(
      (await tx.getCampaigns([...new Set(slices.map((s) => s.campaignId))])).map((c) => [c.id, c]),
    );
    const campaignLines = new Map<number, StatementLineRecord>();
    for (const slice of slices) {
      const campaign = campaigns.get(slice.campaignId);
      if (campaign === undefined) continue;
      let target = campaignLines.get(slice.campaignId);
      if (target === undefined) {
        target = line({ kind: 'campaign', campaignId: campaign.id, campaignName: campaign.title });
        campaignLines.set(slice.campaignId, target);
        draftOf('advertiser', campaign.advertiserId).lines.push(target);
      }
      addSlice(target, slice);
    }
    for (const campaign of await tx.flatCampaigns()) {
      const charge = flatCharge(campaign);
      if (charge === null || charge.at < start || charge.at >= end) continue;
      draftOf('advertiser', campaign.advertiserId).lines.push(
        line({
          kind: 'flat',
          campaignId: campaign.id,
          campaignName: campaign.title,
          amountMicros: charge.amount,
        }),
      );
    }

    // Partners: their events by placement and key, from the raw events.
    const keyNames = new Map<number, string>();
    const keyLines = new Map<string, StatementLineRecord>();
    for (const slice of await tx.partnerMonth(start, end)) {
      const key = `${slice.partnerId}:${slice.placementId}:${slice.apiKeyId}`;
      let target = keyLines.get(key);
      if (target === undefined) {
        if (!keyNames.has(slice.apiKeyId)) {
          const apiKey = await tx.getApiKey(slice.apiKeyId);
          keyNames.set(slice.apiKeyId, apiKey?.label ?? apiKey?.displayPrefix ?? `key ${slice.apiKeyId}`);
        }
        target = line({
          kind: 'placement_key',
          placementId: slice.placementId,
          apiKeyId: slice.apiKeyId,
          apiKeyName: keyNames.get(slice.apiKeyId)!,
        });
        keyLines.set(key, target);
        draftOf('partner', slice.partnerId).lines.push(target);
      }
      addSlice(target, slice);
    }

    // What each account carries: its adjustments not carried yet, a partner's balance carried forward.
    for (const adjustment of await tx.listAdjustments({ pending: true }))
      draftOf(adjustment.kind, adjustment.accountId).adjustments.push(adjustment);
    if (lastMonth !== undefined)
      for (const previous of await tx.listStatements({ kind: 'partner', month: lastMonth }))
        if (previous.carriedForwardMicros !== 0)
          draftOf('partner', previous.accountId).openingBalance = previous.carriedForwardMicros;

    // An account with no money, no adjustment and no balance gets no statement.
    return [...drafts.values()]
      .filter(
        (draft) =>
          draft.lines.some((l) => l.amountMicros !== 0) ||
          draft.adjustments.length > 0 ||
          draft.openingBalance !== 0,
      )
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.accountId - b.accountId);
  }

  private summary(
    statement: StatementRecord,
    payment: { reference: string; paidAt: number; paidBy: string } | undefined,
  ): StatementSummaryView {
    return {
      ...statement,
      periodStart: iso(statement.periodStart),
      periodEnd: iso(statement.periodEnd),
      issuedAt: iso(statement.issuedAt),
      payment:
        payment === undefined
          ? null
          : { reference: payment.reference, paidAt: iso(payment.paidAt), paidBy: payment.paidBy },
    };
  }

  /** The filter an actor may read: its own account's, whatever it asked, unless it is the operator's. */
  private scoped(filter: {
    kind?: unknown;
    accountId?: unknown;
  }): { kind?: StatementKind; accountId?: number } | null {
    const kind = filter.kind === undefined || filter.kind === '' ? undefined : checkKind(filter.kind);
    const accountId =
      filter.accountId === undefined || filter.accountId === ''
        ? undefined
        : checkAccountId(filter.accountId);
    const account = this.actor.account;
    if (account.kind === 'operator')
      return { ...(kind !== undefined && { kind }), ...(accountId !== undefined && { accountId }) };
    if (
      (kind !== undefined && kind !== account.kind) ||
      (accountId !== undefined && accountId !== account.id)
    )
      return null;
    return { kind: account.kind, accountId: account.id };
  }

  /** Statements, oldest month first, filtered; another account's read as none. */
  async list(filter: {
    kind?: unknown;
    accountId?: unknown;
    month?: unknown;
  }): Promise<StatementSummaryView[]> {
    const scope = this.scoped(filter);
    const month = filter.month === undefined || filter.month === '' ? undefined : checkMonth(filter.month);
    if (scope === null) return [];
    const statements = await this.store.listStatements({ ...scope, ...(month !== undefined && { month }) });
    const payments = await this.store.paymentsOf(statements.map((s) => s.id));
    return statements.map((s) => this.summary(s, payments.get(s.id)));
  }

  /** One statement the actor may see (another account's is a 404, like a missing one). */
  private async find(store: Store, id: unknown): Promise<StatementRecord> {
    const number = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id;
    const [statement] =
      typeof number === 'number' && Number.isSafeInteger(number)
        ? await store.listStatements({ id: number })
        : [];
    if (statement === undefined || !sees(this.actor, { kind: statement.kind, id: statement.accountId }))
      throw notFound(`statement ${String(id)} not found`);
    return statement;
  }

  /** A statement with its lines and payment. */
  async get(id: unknown): Promise<StatementView> {
    const statement = await this.find(this.store, id);
    const payments = await this.store.paymentsOf([statement.id]);
    const lines: StatementLineView[] = await this.store.statementLines(statement.id);
    return { ...this.summary(statement, payments.get(statement.id)), lines };
  }

  /**
   * A statement as CSV: a header line, one line per statement line, then its totals (subtotal,
   * adjustments, opening balance, total, payable, carried forward), amounts in units with the
   * currency's decimals.
   */
  async csv(id: unknown): Promise<string> {
    const statement = await this.get(id);
    const amount = (value: number) => moneyFigure(value as Micros, statement.currency);
    const text = (value: string | number | null) => (value === null ? '' : String(value));
    const header = [
      'statement',
      'month',
      'line',
      'campaign',
      'campaignName',
      'placement',
      'apiKey',
      'apiKeyName',
      'adjustment',
      'reason',
      'impressions',
      'clicks',
      'invalidImpressions',
      'invalidClicks',
      'amount',
      'currency',
    ];
    const row = (kind: string, fields: Partial<StatementLineView>, value: number) => [
      String(statement.id),
      statement.month,
      kind,
      text(fields.campaignId ?? null),
      text(fields.campaignName ?? null),
      text(fields.placementId ?? null),
      text(fields.apiKeyId ?? null),
      text(fields.apiKeyName ?? null),
      text(fields.adjustmentId ?? null),
      text(fields.reason ?? null),
      text(fields.impressions ?? null),
      text(fields.clicks ?? null),
      text(fields.invalidImpressions ?? null),
      text(fields.invalidClicks ?? null),
      amount(value),
      statement.currency,
    ];
    const totals: [string, number][] = [
      ['subtotal', statement.subtotalMicros],
      ['adjustments', statement.adjustmentsMicros],
      ['openingBalance', statement.openingBalanceMicros],
      ['total', statement.totalMicros],
      ['payable', statement.payableMicros],
      ['carriedForward', statement.carriedForwardMicros],
    ];
    return csvText([
      header,
      ...statement.lines.map((l) => row(l.kind, l, l.amountMicros)),
      ...totals.map(([name, value]) => row(name, {}, value)),
    ]);
  }

  private adjustmentView(adjustment: AdjustmentRecord, accountName: string): AdjustmentView {
    return { ...adjustment, accountName, createdAt: iso(adjustment.createdAt) };
  }

  /** Records an adjustment on an advertiser or a partner, carried on its next statement; audited. */
  async addAdjustment(input: {
    kind?: unknown;
    accountId?: unknown;
    amountMicros?: unknown;
    reason?: unknown;
  }): Promise<AdjustmentView> {
    requireOperator(this.actor, 'record an adjustment');
    const kind = checkKind(input.kind);
    const accountId = checkAccountId(input.accountId);
    const amountMicros = checkAdjustmentAmount(input.amountMicros);
    const reason = trimmedText('reason', input.reason, 500);
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const account =
        kind === 'advertiser' ? await tx.findAdvertiser(accountId) : await tx.findPartner(accountId);
      if (account === undefined) throw notFound(`${kind} ${accountId} not found`);
      const adjustment = await tx.addAdjustment({
        kind,
        accountId,
        amountMicros,
        reason,
        createdAt: now,
        createdBy: this.actor.id,
      });
      const view = this.adjustmentView(adjustment, account.name);
      await audit(
        tx,
        this.actor,
        {
          objectType: kind,
          objectId: accountId,
          action: 'add_adjustment',
          before: null,
          after: view,
          reason,
        },
        now,
      );
      return view;
    });
  }

  /** Adjustments, oldest first, each with the statement carrying it; another account's read as none. */
  async listAdjustments(filter: { kind?: unknown; accountId?: unknown }): Promise<AdjustmentView[]> {
    const scope = this.scoped(filter);
    if (scope === null) return [];
    const adjustments = await this.store.listAdjustments(scope);
    const names = new Map<string, string>();
    const views: AdjustmentView[] = [];
    for (const adjustment of adjustments) {
      const key = `${adjustment.kind}:${adjustment.accountId}`;
      if (!names.has(key))
        names.set(key, await this.accountName(this.store, adjustment.kind, adjustment.accountId));
      views.push(this.adjustmentView(adjustment, names.get(key)!));
    }
    return views;
  }

  /**
   * Marks a partner statement with something payable paid, once, with a reference (a bank
   * transfer's id); audited. A second payment, or one of a statement with nothing payable, is a 409.
   */
  async markPaid(id: unknown, input: { reference?: unknown }): Promise<StatementSummaryView> {
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const statement = await this.find(tx, id);
      requireOperator(this.actor, 'mark a statement paid');
      const reference = trimmedText('reference', input.reference, 200);
      if (statement.kind !== 'partner')
        throw new DomainError(
          'conflict',
          `statement ${statement.id} is an advertiser's: only partner statements are paid out`,
        );
      const paid = (await tx.paymentsOf([statement.id])).get(statement.id);
      if (paid !== undefined)
        throw alreadyDone(
          `statement ${statement.id} was paid already, on ${iso(paid.paidAt)} (reference ${paid.reference}); a payment is recorded once`,
        );
      if (statement.payableMicros <= 0)
        throw new DomainError(
          'conflict',
          `statement ${statement.id} has nothing payable: its total is carried forward to the partner's next statement`,
        );
      const payment = { statementId: statement.id, reference, paidAt: now, paidBy: this.actor.id };
      await once(tx.addPayment(payment), `statement ${statement.id} was paid already`);
      const view = this.summary(statement, payment);
      await audit(
        tx,
        this.actor,
        {
          objectType: 'statement',
          objectId: statement.id,
          action: 'mark_paid',
          before: { payment: null },
          after: { payment: view.payment },
        },
        now,
      );
      return view;
    });
  }
}
