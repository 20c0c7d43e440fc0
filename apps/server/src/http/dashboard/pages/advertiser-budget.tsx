import type { AdvertiserBudget } from '../../../domain/advertiser-budgets.js';
import type { BudgetForecast } from '../../../domain/budget-forecast.js';
import type { Micros } from '../../../domain/money.js';
import { formatPriceAmount } from '../../../domain/prices.js';
import { BudgetTable, FormsPage, type CreateForm, type FormsPageProps } from './parts.js';

/** What an advertiser's campaigns spent, as its budgets count it. */
export interface AdvertiserSpendView {
  /** The billing month, `YYYY-MM`. */
  month: string;
  monthMicros: Micros;
  totalMicros: Micros;
  /** When each budget runs out at the pace of the last hour's spend. */
  forecast: { total: BudgetForecast; month: BudgetForecast };
}

/**
 * The form that sets both budgets, showing those in force (exactly, so that sending it unchanged
 * changes nothing): empty for none.
 */
const SET_BUDGET = (budget: AdvertiserBudget, currency: string): CreateForm => {
  const shown = (amount: Micros | null) => (amount === null ? '' : formatPriceAmount(amount, currency));
  return {
    fields: [
      {
        name: 'budgetTotal',
        label: `Total budget (${currency})`,
        maxLength: 24,
        placeholder: 'none',
        value: shown(budget.totalMicros),
      },
      {
        name: 'budgetMonthly',
        label: `Monthly budget (${currency})`,
        maxLength: 24,
        placeholder: 'none',
        value: shown(budget.monthlyMicros),
      },
    ],
    button: 'Set the budgets',
  };
};

/**
 * An advertiser's spend budgets (D18) and what its campaigns spent against each, amounts
 * right-aligned in tabular figures: for the operator and the advertiser's own people, who set them.
 */
export function AdvertiserBudgetPage(
  props: FormsPageProps & {
    advertiser: { id: number; name: string; budget: AdvertiserBudget };
    spend: AdvertiserSpendView;
    currency: string;
    billingTimeZone: string;
  },
) {
  const { advertiser, spend, currency, billingTimeZone } = props;
  return (
    <FormsPage
      title={`Budget of ${advertiser.name}`}
      path={`/advertisers/${advertiser.id}/budget`}
      of={props}
      create={SET_BUDGET(advertiser.budget, currency)}
    >
      <p class="hint">
        What all of {advertiser.name}’s campaigns may spend together, in total and per billing month (
        {billingTimeZone}), beside each campaign’s own budgets: the most restrictive wins. An event that would
        pass one is stored as not billable (past advertiser budget) and costs nothing; once a budget is spent
        its campaigns are not offered, until the next month for the monthly budget, or until the budget is
        raised for the total. Amounts in units of {currency}; empty for none. When each runs out goes on at
        the pace of the last hour’s spend.
      </p>
      <BudgetTable
        label={`Budget of ${advertiser.name}`}
        currency={currency}
        timeZone={billingTimeZone}
        rows={[
          {
            label: 'Total',
            budget: advertiser.budget.totalMicros,
            spent: spend.totalMicros,
            forecast: spend.forecast.total,
          },
          {
            label: `This month (${spend.month})`,
            budget: advertiser.budget.monthlyMicros,
            spent: spend.monthMicros,
            forecast: spend.forecast.month,
          },
        ]}
      />
    </FormsPage>
  );
}
