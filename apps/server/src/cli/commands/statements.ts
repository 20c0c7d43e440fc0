import type { Command } from 'commander';
import type { Config } from '../../config.js';
import { parseMoney, type Micros } from '../../domain/money.js';
import { moneyFigure } from '../../domain/money-rates.js';
import { CLI_ACTOR } from '../../services/audit.js';
import type { AdjustmentView, StatementSummaryView } from '../../services/statement-views.js';
import { StatementService } from '../../services/statements.js';
import type { Store } from '../../store/store.js';
import { positiveInteger, storeAction } from '../context.js';
import { counted, emit, printTable, type OutputOptions, type Row } from '../output.js';

/** The statements of the command line's actor, with the deployment's billing settings. */
const service = (store: Store, config: Config) =>
  new StatementService(
    store,
    CLI_ACTOR,
    Date.now,
    config.billingTimeZone,
    config.currency,
    config.minimumPayoutMicros,
  );

/** An amount for reading, in units with the statement's currency's decimals (the JSON has the micros). */
const amount = (micros: number, currency: string) => moneyFigure(micros as Micros, currency);

const summaryRow = (s: StatementSummaryView): Row => ({
  id: s.id,
  month: s.month,
  kind: s.kind,
  account: `${s.accountId} ${s.accountName}`,
  subtotal: amount(s.subtotalMicros, s.currency),
  adjustments: amount(s.adjustmentsMicros, s.currency),
  opening: amount(s.openingBalanceMicros, s.currency),
  total: amount(s.totalMicros, s.currency),
  payable: amount(s.payableMicros, s.currency),
  carried: amount(s.carriedForwardMicros, s.currency),
  currency: s.currency,
  paid: s.payment?.reference ?? null,
});
const SUMMARY_COLUMNS = [
  'id',
  'month',
  'kind',
  'account',
  'subtotal',
  'adjustments',
  'opening',
  'total',
  'payable',
  'carried',
  'currency',
  'paid',
];

/** The account an option pair names: `--advertiser <id>` or `--partner <id>`, one of them or none. */
function accountOption(options: { advertiser?: string; partner?: string }, required: boolean) {
  if (options.advertiser !== undefined && options.partner !== undefined)
    throw new Error('give --advertiser or --partner, not both');
  if (options.advertiser !== undefined)
    return { kind: 'advertiser', accountId: positiveInteger(options.advertiser, 'advertiser id') };
  if (options.partner !== undefined)
    return { kind: 'partner', accountId: positiveInteger(options.partner, 'partner id') };
  if (required) throw new Error('give the account: --advertiser <id> or --partner <id>');
  return {};
}

/** Monthly statements, adjustments and payouts (D18). */
export function registerStatements(program: Command): void {
  const statements = program
    .command('statements')
    .description("advertisers' and partners' monthly statements (PLACARD_BILLING_TIME_ZONE months)");
  storeAction(
    statements
      .command('months')
      .description('the billing months: closed or not, issued or not, the next to issue'),
    async ({ store, config }, options: OutputOptions) => {
      const months = await service(store, config).months();
      emit(options, months, () =>
        printTable(
          months.map((m) => ({ ...m, nextToIssue: m.nextToIssue ? 'next' : '' })),
          ['month', 'closed', 'issued', 'nextToIssue'],
        ),
      );
    },
  );
  storeAction(
    statements
      .command('issue <month>')
      .description(
        "issue every advertiser's and partner's statement of a closed month, YYYY-MM, once, in order",
      ),
    async ({ store, config }, options: OutputOptions, month) => {
      const issued = await service(store, config).issue(month);
      emit(options, issued, () => {
        console.log(`issued ${counted(issued.length, 'statement')} for ${month}`);
        if (issued.length > 0) printTable(issued.map(summaryRow), SUMMARY_COLUMNS);
      });
    },
  );
  storeAction(
    statements
      .command('list')
      .description('list statements, oldest month first')
      .option('--month <month>', 'only this month, YYYY-MM')
      .option('--advertiser <id>', "only this advertiser's")
      .option('--partner <id>', "only this partner's"),
    async (
      { store, config },
      options: OutputOptions & { month?: string; advertiser?: string; partner?: string },
    ) => {
      const list = await service(store, config).list({
        ...accountOption(options, false),
        ...(options.month !== undefined && { month: options.month }),
      });
      emit(options, list, () => printTable(list.map(summaryRow), SUMMARY_COLUMNS));
    },
  );
  storeAction(
    statements
      .command('show <id>')
      .description('a statement with its lines')
      .option('--csv', 'as CSV: a header, its lines, then its totals'),
    async ({ store, config }, options: OutputOptions & { csv?: boolean }, id) => {
      const statements = service(store, config);
      const number = positiveInteger(id, 'statement id');
      if (options.csv) {
        process.stdout.write(await statements.csv(number));
        return;
      }
      const statement = await statements.get(number);
      emit(options, statement, () => {
        printTable([summaryRow(statement)], SUMMARY_COLUMNS);
        printTable(
          statement.lines.map((line) => ({
            line: line.kind,
            campaign: line.campaignId === null ? null : `${line.campaignId} ${line.campaignName ?? ''}`,
            placement: line.placementId,
            key: line.apiKeyId === null ? null : `${line.apiKeyId} ${line.apiKeyName ?? ''}`,
            impressions: line.impressions,
            clicks: line.clicks,
            invalidImpressions: line.invalidImpressions,
            invalidClicks: line.invalidClicks,
            amount: amount(line.amountMicros, statement.currency),
            reason: line.reason,
          })),
          [
            'line',
            'campaign',
            'placement',
            'key',
            'impressions',
            'clicks',
            'invalidImpressions',
            'invalidClicks',
            'amount',
            'reason',
          ],
        );
      });
    },
  );
  storeAction(
    statements
      .command('pay <id>')
      .description('mark a partner statement with something payable paid, once')
      .requiredOption('--reference <reference>', "the payment's reference, such as the bank transfer's id"),
    async ({ store, config }, options: OutputOptions & { reference: string }, id) => {
      const paid = await service(store, config).markPaid(positiveInteger(id, 'statement id'), {
        reference: options.reference,
      });
      emit(options, paid, () =>
        console.log(
          `statement ${paid.id} paid: ${paid.currency} ${amount(paid.payableMicros, paid.currency)} to ${paid.accountName}, reference ${options.reference}`,
        ),
      );
    },
  );

  const adjustments = program
    .command('adjustments')
    .description("corrections to an advertiser's or a partner's account, carried on its next statement");
  const adjustmentRow = (a: AdjustmentView, currency: string): Row => ({
    id: a.id,
    account: `${a.kind} ${a.accountId} ${a.accountName}`,
    amount: amount(a.amountMicros, currency),
    reason: a.reason,
    createdAt: a.createdAt,
    createdBy: a.createdBy,
    statement: a.carriedOnStatementId,
  });
  storeAction(
    adjustments
      .command('add')
      .description(
        'record an adjustment, carried once on the account’s next statement (never changed afterwards)',
      )
      .option('--advertiser <id>', 'on this advertiser')
      .option('--partner <id>', 'on this partner')
      .requiredOption('--amount <amount>', 'in units of the currency, signed: -12.50 credits the account')
      .requiredOption('--reason <reason>', 'why, as the statement will show it'),
    async (
      { store, config },
      options: OutputOptions & { advertiser?: string; partner?: string; amount: string; reason: string },
    ) => {
      const added = await service(store, config).addAdjustment({
        ...accountOption(options, true),
        amountMicros: parseMoney(options.amount, 'amount', { allowNegative: true }),
        reason: options.reason,
      });
      emit(options, added, () =>
        console.log(
          `adjustment ${added.id}: ${config.currency} ${amount(added.amountMicros, config.currency)} on ${added.kind} ${added.accountId} "${added.accountName}", carried on its next statement`,
        ),
      );
    },
  );
  storeAction(
    adjustments
      .command('list')
      .description('list adjustments, oldest first, with the statement carrying each')
      .option('--advertiser <id>', "only this advertiser's")
      .option('--partner <id>', "only this partner's"),
    async ({ store, config }, options: OutputOptions & { advertiser?: string; partner?: string }) => {
      const list = await service(store, config).listAdjustments(accountOption(options, false));
      emit(options, list, () =>
        printTable(
          list.map((a) => adjustmentRow(a, config.currency)),
          ['id', 'account', 'amount', 'reason', 'createdAt', 'createdBy', 'statement'],
        ),
      );
    },
  );
}
