import type { BlockableAdvertiser } from '../../../services/partners.js';
import { CsrfField } from './layout.js';
import { FieldMessage, invalidAttributes, wordProblems } from './form-problems.js';
import { ButtonForm, DataTable, FormsPage, typed, type FormsPageProps } from './parts.js';

/**
 * What a partner blocks: the advertisers none of whose campaigns it is served, which its own people
 * and the operator's block and unblock here, and the categories the operator blocks for it.
 */
export function PartnerBlocksPage(
  props: FormsPageProps & {
    partner: { id: number; name: string; blockedCategories: readonly string[] };
    blocked: BlockableAdvertiser[];
    /** The advertisers it may block and does not yet. */
    choices: BlockableAdvertiser[];
    /** Whether the operator's people are looking (they set the categories). */
    operator: boolean;
  },
) {
  const { partner, blocked, choices, canChange, page, refused, operator } = props;
  const path = `/partners/${partner.id}/blocks`;
  const whose = operator ? partner.name : 'you';
  const worded =
    refused?.action === path
      ? wordProblems(refused.problem, refused.problems, { blockedAdvertisers: 'Advertiser to block' })
      : undefined;
  const problem = worded && [...worded.fields.values(), ...worded.others].join(' ');
  const chosen = typed(refused, path, 'blockedAdvertisers');
  return (
    <FormsPage
      title={`What ${partner.name} blocks`}
      path={path}
      of={props}
      rowLabels={{ blockedAdvertisers: 'Advertiser to block' }}
    >
      <p class="hint">
        No campaign of a blocked advertiser, and none in a blocked category, is ever served to{' '}
        {operator ? partner.name : 'you'}: fetches leave them out and their impressions and clicks are refused
        as unknown campaigns. A change reaches every server within seconds.
      </p>
      <h2 class="section-title">Blocked advertisers</h2>
      <DataTable
        label={`Advertisers ${partner.name} blocks`}
        count={blocked.length}
        noun={['One advertiser', 'advertisers']}
        empty={
          canChange
            ? `${operator ? `${partner.name} blocks` : 'You block'} no advertiser: every advertiser’s campaigns may be served to ${whose}. Choose one below to block it.`
            : `${operator ? `${partner.name} blocks` : 'You block'} no advertiser: every advertiser’s campaigns may be served to ${whose}.`
        }
        headers={['Advertiser', canChange && 'Action']}
      >
        {blocked.map((advertiser) => (
          <tr key={advertiser.id}>
            <td>{advertiser.name}</td>
            {canChange && (
              <td>
                <ButtonForm
                  action={`${path}/unblock`}
                  csrf={page.csrf}
                  text="Unblock"
                  label={`Unblock ${advertiser.name}`}
                  look="secondary"
                  sends={{ advertiserId: String(advertiser.id) }}
                />
              </td>
            )}
          </tr>
        ))}
      </DataTable>
      {canChange &&
        (choices.length === 0 ? (
          <p class="note">
            {operator
              ? 'Every advertiser is blocked already, or there is none yet.'
              : 'No other advertiser has a campaign that may be served to you now: one appears here once the operator approves its campaign.'}
          </p>
        ) : (
          <form method="post" action={path} class="inline">
            <CsrfField token={page.csrf} />
            <span class="field">
              <label for="blockedAdvertisers">Advertiser to block</label>
              <select
                id="blockedAdvertisers"
                name="blockedAdvertisers"
                required
                {...invalidAttributes('blockedAdvertisers', problem)}
              >
                <option value="">Choose an advertiser</option>
                {choices.map((advertiser) => (
                  <option
                    key={advertiser.id}
                    value={String(advertiser.id)}
                    selected={chosen === String(advertiser.id)}
                  >
                    {advertiser.name}
                  </option>
                ))}
              </select>
              <FieldMessage fieldId="blockedAdvertisers" message={problem} />
            </span>
            <button type="submit">Block</button>
          </form>
        ))}
      <h2 class="section-title">Blocked categories</h2>
      <p>
        {partner.blockedCategories.length === 0
          ? 'None: campaigns of every category may be served.'
          : partner.blockedCategories.join(', ')}
      </p>
      <p class="note">
        {operator ? (
          <>
            Blocked categories are set on <a href="/partners">Partners</a>.
          </>
        ) : (
          'The operator sets the categories you never receive: ask them to change these.'
        )}
      </p>
    </FormsPage>
  );
}
