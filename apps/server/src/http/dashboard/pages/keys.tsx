import type { keyView } from '../../../services/partners.js';
import { Layout, type PageContext, type Refused } from './layout.js';
import { ButtonForm, DataTable, FieldForm, FormsPage, SecretField, type FormsPageProps } from './parts.js';
import { when } from './format.js';

type KeyRow = ReturnType<typeof keyView> & { partnerName: string };

/**
 * What the person may do with a key: its partner's people rotate and revoke it; the operator's
 * also suspend it with a reason, and reinstate it.
 */
function KeyActions({
  apiKey,
  csrf,
  operator,
  refused,
}: {
  apiKey: KeyRow;
  csrf: string;
  operator: boolean;
  refused: Refused | undefined;
}) {
  const key = `key ${apiKey.prefix}`;
  if (apiKey.status === 'suspended' && operator) {
    const action = `/keys/${apiKey.id}/reinstate`;
    return <ButtonForm action={action} csrf={csrf} text="Reinstate" label={`Reinstate ${key}`} />;
  }
  if (apiKey.status !== 'active') return null;
  return (
    <div class="actions">
      {apiKey.expiresAt === null && (
        <ButtonForm action={`/keys/${apiKey.id}/rotate`} csrf={csrf} text="Rotate" label={`Rotate ${key}`} />
      )}
      <ButtonForm
        action={`/keys/${apiKey.id}/revoke`}
        csrf={csrf}
        text="Revoke"
        label={`Revoke ${key}`}
        look="danger"
      />
      {operator && (
        <FieldForm
          action={`/keys/${apiKey.id}/suspend`}
          csrf={csrf}
          name="reason"
          label={`Reason to suspend ${key}`}
          placeholder="reason the partner reads"
          required
          button="Suspend"
          buttonLabel={`Suspend ${key}`}
          danger
          refused={refused}
        />
      )}
    </div>
  );
}

/** A key's status in words, with the suspension reason and the browser-use warning where they apply. */
function Status({ apiKey }: { apiKey: KeyRow }) {
  return (
    <>
      <span class={`status status-${apiKey.status}`}>{apiKey.status}</span>
      {apiKey.suspendedReason && <p class="note">Suspended: {apiKey.suspendedReason}</p>}
      {apiKey.expiresAt !== null && apiKey.status === 'active' && (
        <p class="note">Rotated: stops working {when(apiKey.expiresAt)}</p>
      )}
      {apiKey.browserRequests > 0 && (
        <p class="note warning">
          Used from a web browser {apiKey.browserRequests} times (last {when(apiKey.lastBrowserRequestAt)}):
          keys belong on your server only.
        </p>
      )}
    </>
  );
}

export function KeysPage(
  props: FormsPageProps & {
    keys: KeyRow[];
    /** The partner whose keys these are (a partner's people), or undefined for the operator. */
    partnerId: number | undefined;
  },
) {
  const { keys, page, refused } = props;
  return (
    <FormsPage
      title="API keys"
      path="/keys"
      of={props}
      create={
        props.partnerId !== undefined && {
          fields: [{ name: 'label', label: 'Label', maxLength: 100, placeholder: 'production web server' }],
          button: 'Create a key',
        }
      }
    >
      <DataTable
        label="API keys"
        count={keys.length}
        noun={['One key', 'keys']}
        empty={
          props.partnerId !== undefined
            ? 'No API keys yet. Create one above: your server sends it with every request to the delivery API.'
            : 'No API keys yet. A partner creates its keys after signing in, or an operator creates one with placard keys create.'
        }
        headers={[
          'Key',
          props.partnerId === undefined && 'Partner',
          'Label',
          'Status',
          'Created',
          'Last used',
          props.canChange && 'Actions',
        ]}
      >
        {keys.map((apiKey) => (
          <tr key={apiKey.id}>
            <td>
              <code>{apiKey.prefix}…</code>
            </td>
            {props.partnerId === undefined && <td>{apiKey.partnerName}</td>}
            <td>{apiKey.label ?? '—'}</td>
            <td>
              <Status apiKey={apiKey} />
            </td>
            <td>{when(apiKey.createdAt)}</td>
            <td>{when(apiKey.lastUsedAt)}</td>
            {props.canChange && (
              <td>
                <KeyActions
                  apiKey={apiKey}
                  csrf={page.csrf}
                  operator={props.partnerId === undefined}
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

/** The new key's plaintext, shown this once: the store keeps only its digest. */
export function NewKeyPage(props: {
  page: PageContext;
  plaintext: string;
  prefix: string;
  rotatedFrom?: string;
}) {
  return (
    <Layout title="Your new API key" page={props.page} current="/keys">
      {props.rotatedFrom && (
        <p>
          Key <code>{props.rotatedFrom}…</code> keeps working for 24 hours: deploy this one before then.
        </p>
      )}
      <p>
        Copy it now and keep it on your server. <strong>It is shown only this once</strong>; Placard keeps
        only a fingerprint of it.
      </p>
      <SecretField id="new-key" label="API key" value={props.plaintext} />
      <p>
        <a href="/keys">I have stored it: back to the keys</a>
      </p>
    </Layout>
  );
}
