import { DataTable, FieldForm, FormsPage, type CreateForm, type ListPageProps } from './parts.js';

export interface AdvertiserRow {
  id: number;
  name: string;
  campaigns: number;
  createdAt: number;
}

/** The form that creates an advertiser. */
const CREATE_ADVERTISER: CreateForm = {
  fields: [{ name: 'name', label: 'Name', required: true, maxLength: 100 }],
  button: 'Create an advertiser',
};

/** The advertisers (the accounts campaigns belong to), for the operator. */
export function AdvertisersPage(props: ListPageProps & { advertisers: AdvertiserRow[] }) {
  const { page, refused } = props;
  return (
    <FormsPage title="Advertisers" path="/advertisers" of={props} create={CREATE_ADVERTISER}>
      <DataTable
        label="Advertisers"
        count={props.advertisers.length}
        noun={['One advertiser', 'advertisers']}
        paging={props.paging}
        empty={
          props.canChange
            ? 'No advertisers yet. Create the first one above, then invite its people from Users: they create its campaigns after signing in.'
            : 'No advertisers to show.'
        }
        headers={['Advertiser', 'Campaigns', props.canChange && 'Rename']}
      >
        {props.advertisers.map((advertiser) => (
          <tr key={advertiser.id}>
            <td>{advertiser.name}</td>
            <td>{advertiser.campaigns}</td>
            {props.canChange && (
              <td>
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
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </FormsPage>
  );
}
