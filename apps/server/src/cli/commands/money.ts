import type { Command } from 'commander';
import { moneyFigure } from '../../domain/money-rates.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { sharePercent } from '../../domain/revenue-shares.js';
import { MoneySummaryService, SUMMARY_MONTHS, type MoneyFigures } from '../../services/money-summary.js';
import { storeAction } from '../context.js';
import { emit, type OutputOptions } from '../output.js';
import { renderTable } from '../table.js';

/** A margin in basis points as a percentage with two decimals (`30.00%`), `–` without revenue. */
const marginPercent = (basisPoints: number | null): string =>
  basisPoints === null ? '–' : `${sharePercent(basisPoints)}%`;

/** `placard money summary`: GET /admin/v1/money/summary as tables or JSON. */
export function registerMoney(program: Command): void {
  const money = program.command('money').description('revenue, partner earnings and margin');
  storeAction(
    money
      .command('summary')
      .description(
        'a month of the billing time zone: revenue, partner earnings and margin, by advertiser and partner, and the months before',
      )
      .option('--month <YYYY-MM>', 'the month; default this month'),
    async ({ store, config }, options: OutputOptions & { month?: string }) => {
      const service = new MoneySummaryService(
        store,
        CLI_ACTOR,
        Date.now,
        config.currency,
        config.billingTimeZone,
      );
      const summary = await service.month(options.month);
      const months = await service.months(SUMMARY_MONTHS, summary.month);
      const range = { from: new Date(summary.from).toISOString(), to: new Date(summary.to).toISOString() };
      emit(options, { ...summary, ...range, months }, () => {
        const amounts = (figures: MoneyFigures) => [
          ...[figures.spendMicros, figures.earningsMicros, figures.marginMicros].map((amount) =>
            moneyFigure(amount, summary.currency),
          ),
          marginPercent(figures.marginBasisPoints),
        ];
        const header = ['revenue', 'partnerEarnings', 'margin', 'margin%'];
        // Names on the left, amounts on the right (decimal points under each other).
        const table = (first: string, rows: string[][]) =>
          renderTable([first, ...header], rows, { alignRight: (i) => i > 0, rules: true });
        console.log(
          `${summary.month} (${summary.timeZone}${summary.live ? ', so far' : ''}), in ${summary.currency}`,
        );
        process.stdout.write(table('month', [[summary.month, ...amounts(summary.totals)]]));
        for (const kind of ['advertiser', 'partner'] as const) {
          const lines = kind === 'advertiser' ? summary.advertisers : summary.partners;
          console.log(`\nBy ${kind}`);
          if (lines.length === 0) console.log('(no revenue this month)');
          else
            process.stdout.write(
              table(
                kind,
                lines.map((line) => [`${line.id} ${line.name}`, ...amounts(line)]),
              ),
            );
        }
        console.log('\nMonths');
        process.stdout.write(
          table(
            'month',
            months.map((month) => [month.month, ...amounts(month)]),
          ),
        );
      });
    },
  );
}
