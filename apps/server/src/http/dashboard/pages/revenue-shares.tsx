import type { RevenueShareView } from '../../../services/revenue-shares.js';
import { whenIn } from './format.js';
import { DataTable, FormsPage, type CreateForm, type FormsPageProps } from './parts.js';

/** The form that sets a share: a percentage with up to two decimals (a basis point) and its date. */
const SET_SHARE = (today: string, timeZone: string): CreateForm => ({
  fields: [
    { name: 'percent', label: 'Share (%)', required: true, maxLength: 7, placeholder: '70.00' },
    {
      name: 'effectiveDate',
      label: `From (YYYY-MM-DD, ${timeZone})`,
      required: true,
      maxLength: 10,
      placeholder: today,
    },
  ],
  button: 'Set the share',
});

/**
 * A partner's revenue shares (D18), the latest to take effect first: for the operator, who sets
 * them, and for the partner's own people, who read what they earn.
 */
export function RevenueSharesPage(
  props: FormsPageProps & {
    partner: { id: number; name: string };
    shares: Array<RevenueShareView & { setByName: string }>;
    /** Today in the billing time zone, the earliest date a share may be set from. */
    today: string;
    billingTimeZone: string;
    /** The share in force now, if any. */
    current: RevenueShareView | undefined;
  },
) {
  const { partner, shares, canChange, billingTimeZone } = props;
  const path = `/partners/${partner.id}/revenue-shares`;
  return (
    <FormsPage
      title={`Revenue share of ${partner.name}`}
      path={path}
      of={props}
      create={SET_SHARE(props.today, billingTimeZone)}
    >
      <p class="hint">
        {partner.name} earns its share of the cost of each charged event of its traffic: the share in force
        when the event happened. A share takes effect at the start of its date ({billingTimeZone}), or at once
        when set for today; a past date cannot be set, since earnings already made never change.
        {props.current === undefined
          ? ' No share is in force now: its events earn nothing.'
          : ` In force now: ${props.current.percent}%.`}
      </p>
      <DataTable
        label={`Revenue shares of ${partner.name}`}
        count={shares.length}
        noun={['One share', 'shares']}
        empty={
          canChange
            ? 'No revenue share yet, so this partner earns nothing. Set its share above: a percentage (70 or 70.05) and the date it starts.'
            : 'No revenue share yet, so your traffic earns nothing. The operator sets your share; ask them.'
        }
        headers={['From', 'Share', 'Takes effect', 'Set by']}
      >
        {shares.map((share) => (
          <tr key={share.id}>
            <td>{share.effectiveDate}</td>
            <td>{share.percent}%</td>
            <td>{whenIn(Date.parse(share.effectiveFrom), billingTimeZone)}</td>
            <td>{share.setByName}</td>
          </tr>
        ))}
      </DataTable>
    </FormsPage>
  );
}
