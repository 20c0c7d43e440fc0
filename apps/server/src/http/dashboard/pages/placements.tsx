import type { Placement } from '../../../store/store.js';
import { ButtonForm, FieldForm, FormsPage, ListTable, type CreateForm, type ListPageProps } from './parts.js';

/** The form that adds a placement to the registry. */
const ADD_PLACEMENT: CreateForm = {
  fields: [
    { name: 'id', label: 'Id', required: true, maxLength: 64, placeholder: 'video_preroll' },
    { name: 'description', label: 'Description', required: true, maxLength: 200 },
  ],
  button: 'Add a placement',
};

/**
 * The placement registry (D1): the operator's people see every placement, and its admins and
 * managers add, describe, enable and disable them; everyone else sees the enabled ones, which are
 * the placements a partner's server may ask for.
 */
export function PlacementsPage(
  props: ListPageProps & {
    placements: Placement[];
    operator: boolean;
  },
) {
  const { page, refused, canChange } = props;
  return (
    <FormsPage title="Placements" path="/placements" of={props} create={ADD_PLACEMENT}>
      <p class="hint">
        {props.operator
          ? 'A disabled placement is answered like an unknown one: partners get 400 and campaigns are not served in it.'
          : 'The placements your server may ask for: send the id as placement when fetching campaigns and reporting events.'}
      </p>
      <ListTable
        noun={['One placement', 'placements']}
        rows={props.placements}
        paging={props.paging}
        empty={
          canChange
            ? 'No placements yet. Add the first one above: partners ask for campaigns by its id.'
            : 'No placement is enabled yet: the operator adds and enables them.'
        }
        columns={[
          { header: 'Placement', cell: (placement) => <code>{placement.id}</code> },
          {
            header: 'Description',
            cell: (placement) =>
              canChange ? (
                <FieldForm
                  action={`/placements/${placement.id}`}
                  csrf={page.csrf}
                  name="description"
                  label={`Description of ${placement.id}`}
                  value={placement.description}
                  required
                  maxLength={200}
                  button="Save"
                  buttonLabel={`Save the description of ${placement.id}`}
                  refused={refused}
                />
              ) : (
                placement.description
              ),
          },
          props.operator && {
            header: 'Status',
            cell: (placement) => (
              <span class={`status status-${placement.enabled ? 'enabled' : 'disabled'}`}>
                {placement.enabled ? 'enabled' : 'disabled'}
              </span>
            ),
          },
          canChange && {
            header: 'Serving',
            cell: (placement) => (
              <ButtonForm
                action={`/placements/${placement.id}/${placement.enabled ? 'disable' : 'enable'}`}
                csrf={page.csrf}
                text={placement.enabled ? 'Disable' : 'Enable'}
                label={`${placement.enabled ? 'Disable' : 'Enable'} ${placement.id}`}
                look="secondary"
              />
            ),
          },
        ]}
      />
    </FormsPage>
  );
}
