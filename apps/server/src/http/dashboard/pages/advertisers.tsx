import { advertiserBudgetText, type AdvertiserBudget } from '../../../domain/advertiser-budgets.js';
import { advertiserPricingText, type AdvertiserPricing } from '../../../domain/prices.js';
import { ButtonForm, FieldForm, FormsPage, ListTable, type CreateForm, type ListPageProps } from './parts.js';

export interface AdvertiserRow {
  id: number;
  name: string;
  campaigns: number;
  budget: AdvertiserBudget;
  pricing: AdvertiserPricing;
  createdAt: number;
}

/** The form that creates an advertiser. */
const CREATE_ADVERTISER: CreateForm = {
  fields: [{ name: 'name', label: 'Name', required: true, maxLength: 100 }],
  button: 'Create an advertiser',
};

/** The advertisers (the accounts campaigns belong to), for the operator. */
export function AdvertisersPage(props: ListPageProps & { advertisers: AdvertiserRow[]; currency: string }) {
  const { page, refused } = props;
  return (
    <FormsPage title="Advertisers" path="/advertisers" of={props} create={CREATE_ADVERTISER}>
      <ListTable
        noun={['One advertiser', 'advertisers']}
        rows={props.advertisers}
        paging={props.paging}
        empty={
          props.canChange
            ? 'No advertisers yet. Create the first one above, then invite its people from Users: they create its campaigns after signing in.'
            : 'No advertisers to show.'
        }
        columns={[
          { header: 'Advertiser', cell: (advertiser) => advertiser.name },
          { header: 'Campaigns', cell: (advertiser) => advertiser.campaigns },
          {
            header: 'Budget',
            cell: (advertiser) => {
              // The link's name starts with what it shows (WCAG 2.5.3), then says whose it is.
              const text = advertiserBudgetText(advertiser.budget, props.currency);
              return (
                <a
                  href={`/advertisers/${advertiser.id}/budget`}
                  aria-label={`${text}: budget of ${advertiser.name}`}
                >
                  {text}
                </a>
              );
            },
          },
          {
            header: 'Prices set by',
            cell: (advertiser) => (
              <>
                {advertiserPricingText(advertiser.pricing)}
                {props.canChange && <PricingButton advertiser={advertiser} csrf={page.csrf} />}
              </>
            ),
          },
          props.canChange && {
            header: 'Rename',
            cell: (advertiser) => (
              <FieldForm
                action={`/advertisers/${advertiser.id}`}
                csrf={page.csrf}
                name="name"
                label={`New name of ${advertiser.name}`}
                placeholder="new name"
                required
                maxLength={100}
                button="Rename"
                buttonLabel={`Rename ${advertiser.name}`}
                refused={refused}
              />
            ),
          },
        ]}
      />
    </FormsPage>
  );
}

/**
 * The operator's choice of who sets an advertiser's campaigns' prices (D18): one button that allows
 * its own people to, or withdraws that, naming the advertiser for screen readers.
 */
function PricingButton({ advertiser, csrf }: { advertiser: AdvertiserRow; csrf: string }) {
  const allowed = advertiser.pricing === 'advertiser';
  return (
    <ButtonForm
      action={`/advertisers/${advertiser.id}/pricing`}
      csrf={csrf}
      sends={{ pricing: allowed ? 'operator' : 'advertiser' }}
      look="secondary"
      text={allowed ? 'Withdraw' : 'Allow it'}
      label={
        allowed
          ? `Withdraw: only the operator sets the prices of ${advertiser.name}`
          : `Allow it: ${advertiser.name} sets its campaigns’ prices`
      }
    />
  );
}
