import type { AdjustmentView } from '../../../services/statement-views.js';
import { whenIn } from './format.js';
import {
  FieldMessage,
  invalidAttributes,
  ProblemSummary,
  wordProblems,
  type Labels,
} from './form-problems.js';
import { CsrfField, Layout, type PageContext, type Refused } from './layout.js';
import { ListTable, typed } from './parts.js';
import { amountsIn, type Names } from './statements.js';

/** An advertiser or a partner an adjustment may be recorded on, as the form's choice gives it. */
export interface AdjustableAccount {
  /** `advertiser:3` or `partner:1`: the kind and the id in one value. */
  value: string;
  name: string;
}

/** The form's labels, which also word the service's problems (`amountMicros` is the amount typed). */
const labels = (currency: string): Labels => ({
  account: 'Account',
  kind: 'Account',
  accountId: 'Account',
  amount: `Amount (${currency})`,
  amountMicros: `Amount (${currency})`,
  reason: 'Reason',
});

/** Where each service field's problem is shown: the account choice, the amount, the reason. */
const FIELD_OF: Readonly<Record<string, string>> = {
  kind: 'account',
  accountId: 'account',
  amountMicros: 'amount',
};

/**
 * The operator's adjustments (D18): the form that records one on an advertiser or a partner, and
 * every adjustment with the statement it was carried on, or that it waits for the next one.
 */
export function AdjustmentsPage(props: {
  page: PageContext;
  currency: string;
  billingTimeZone: string;
  advertisers: readonly AdjustableAccount[];
  partners: readonly AdjustableAccount[];
  adjustments: readonly AdjustmentView[];
  names: Names;
  canChange: boolean;
  refused?: Refused | undefined;
}) {
  const { refused, currency, page } = props;
  const worded = refused ? wordProblems(refused.problem, refused.problems, labels(currency)) : undefined;
  const problems = new Map<string, string>();
  for (const [field, message] of worded?.fields ?? []) {
    const shown = FIELD_OF[field] ?? field;
    problems.set(shown, [problems.get(shown), message].filter(Boolean).join('; '));
  }
  const chosen = typed(refused, '/adjustments', 'account');
  return (
    <Layout title="Adjustments" page={page} current="/adjustments">
      <p class="hint">
        An adjustment corrects an account's money after the fact: a credit or a charge with its reason. It is
        carried, once, on the next statement issued for that account; issued statements never change.
      </p>
      {worded && (
        <ProblemSummary worded={{ fields: problems, others: worded.others }} idOf={(name) => name} />
      )}
      {props.canChange && (
        <form method="post" action="/adjustments" class="stack wide" data-busy="Recording…">
          <CsrfField token={page.csrf} />
          <label for="account">Account</label>
          <select
            id="account"
            name="account"
            required
            {...invalidAttributes('account', problems.get('account'))}
          >
            <option value="">Choose an advertiser or a partner</option>
            {(
              [
                ['Advertisers', props.advertisers],
                ['Partners', props.partners],
              ] as const
            ).map(([group, accounts]) => (
              <optgroup key={group} label={group}>
                {accounts.map((account) => (
                  <option key={account.value} value={account.value} selected={chosen === account.value}>
                    {account.name}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
          <FieldMessage fieldId="account" message={problems.get('account')} />
          <label for="amount">Amount ({currency})</label>
          <input
            id="amount"
            name="amount"
            required
            maxLength={30}
            inputMode="decimal"
            placeholder="-12.50"
            value={typed(refused, '/adjustments', 'amount')}
            {...invalidAttributes('amount', problems.get('amount'), 'amount-hint')}
          />
          <FieldMessage fieldId="amount" message={problems.get('amount')} />
          <p class="hint" id="amount-hint">
            In {currency}, exactly as typed (up to 6 decimals). Positive adds to what the account owes or
            earns; negative (a minus sign first) takes from it.
          </p>
          <label for="reason">Reason</label>
          <input
            id="reason"
            name="reason"
            required
            maxLength={500}
            value={typed(refused, '/adjustments', 'reason')}
            {...invalidAttributes('reason', problems.get('reason'))}
          />
          <FieldMessage fieldId="reason" message={problems.get('reason')} />
          <button type="submit">Record the adjustment</button>
        </form>
      )}
      <h2 class="section-title">Recorded adjustments</h2>
      <ListTable
        noun={['One adjustment', 'adjustments']}
        rows={props.adjustments}
        empty={
          props.canChange
            ? 'No adjustments yet. Record one above to credit or charge an account on its next statement.'
            : 'No adjustments yet.'
        }
        columns={[
          {
            header: 'Recorded',
            cell: (row) => whenIn(Date.parse(row.createdAt), props.billingTimeZone),
          },
          {
            header: 'Account',
            cell: (row) => `${row.accountName} (${row.kind})`,
          },
          amountsIn<AdjustmentView>(currency)('Amount', (row) => row.amountMicros),
          { header: 'Reason', cell: (row) => row.reason },
          { header: 'By', cell: (row) => props.names.get(row.createdBy) ?? 'the operator' },
          {
            header: 'Carried',
            cell: (row) =>
              row.carriedOnStatementId === null ? (
                'Not yet: on the next statement'
              ) : (
                <a href={`/statements/${row.carriedOnStatementId}`}>
                  On statement #{row.carriedOnStatementId}
                </a>
              ),
          },
        ]}
      />
    </Layout>
  );
}
