import { FieldForm, FormsPage, ListTable, type CreateForm, type ListPageProps } from './parts.js';

export interface PartnerRow {
  id: number;
  name: string;
  blockedCategories: string[];
  blockedAdvertisers: number[];
  activeKeys: number;
}

/** The form that creates a partner, with the categories it refuses from the start. */
const CREATE_PARTNER: CreateForm = {
  fields: [
    { name: 'name', label: 'Name', required: true, maxLength: 100 },
    { name: 'blockedCategories', label: 'Blocked categories', placeholder: 'politics, health' },
  ],
  button: 'Create a partner',
};

/** The partners (the publishers that call the delivery API), for the operator. */
export function PartnersPage(props: ListPageProps & { partners: PartnerRow[] }) {
  const { page, refused } = props;
  return (
    <FormsPage title="Partners" path="/partners" of={props} create={CREATE_PARTNER}>
      <p class="hint">
        Campaigns in a partner's blocked categories, or of an advertiser it blocks, are never served to it.
        Categories are lower-case words, separated by commas; a partner's people block advertisers themselves,
        and so can you from its count of blocked advertisers.
      </p>
      <ListTable
        noun={['One partner', 'partners']}
        rows={props.partners}
        paging={props.paging}
        empty={
          props.canChange
            ? 'No partners yet. Create the first one above, then invite its people from Users: they create their API keys after signing in.'
            : 'No partners to show.'
        }
        columns={[
          { header: 'Partner', cell: (partner) => partner.name },
          {
            header: 'Blocked categories',
            cell: (partner) =>
              props.canChange ? (
                <FieldForm
                  action={`/partners/${partner.id}`}
                  csrf={page.csrf}
                  name="blockedCategories"
                  label={`Blocked categories of ${partner.name}`}
                  value={partner.blockedCategories.join(', ')}
                  placeholder="none"
                  button="Save"
                  buttonLabel={`Save the blocked categories of ${partner.name}`}
                  refused={refused}
                />
              ) : (
                partner.blockedCategories.join(', ') || 'none'
              ),
          },
          {
            header: 'Blocked advertisers',
            cell: (partner) => (
              <a
                href={`/partners/${partner.id}/blocks`}
                aria-label={`${partner.blockedAdvertisers.length} advertisers blocked by ${partner.name}`}
              >
                {partner.blockedAdvertisers.length}
              </a>
            ),
          },
          {
            header: 'Revenue share',
            cell: (partner) => (
              <a
                href={`/partners/${partner.id}/revenue-shares`}
                aria-label={`Share history of ${partner.name}`}
              >
                Share history
              </a>
            ),
          },
          {
            header: 'Active keys',
            cell: (partner) => (
              <a href="/keys" aria-label={`${partner.activeKeys} active keys of ${partner.name}`}>
                {partner.activeKeys}
              </a>
            ),
          },
        ]}
      />
    </FormsPage>
  );
}
