import type { keyView } from '../../../services/partners.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { DataTable, SecretField } from './parts.js';
import { when } from './format.js';

type KeyRow = ReturnType<typeof keyView> & { partnerName: string };

function KeyActions({ apiKey, csrf }: { apiKey: KeyRow; csrf: string }) {
  if (apiKey.status !== 'active') return null;
  return (
    <div class="actions">
      {apiKey.expiresAt === null && (
        <form method="post" action={`/keys/${apiKey.id}/rotate`}>
          <CsrfField token={csrf} />
          <button type="submit" aria-label={`Rotate key ${apiKey.prefix}`}>
            Rotate
          </button>
        </form>
      )}
      <form method="post" action={`/keys/${apiKey.id}/revoke`}>
        <CsrfField token={csrf} />
        <button type="submit" class="danger" aria-label={`Revoke key ${apiKey.prefix}`}>
          Revoke
        </button>
      </form>
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

export function KeysPage(props: {
  page: PageContext;
  keys: KeyRow[];
  /** The partner whose keys these are (a partner's people), or undefined for the operator. */
  partnerId: number | undefined;
  canChange: boolean;
  problem?: string;
}) {
  const { keys, page } = props;
  return (
    <Layout title="API keys" page={page} current="/keys">
      <Problem message={props.problem} />
      {props.canChange && props.partnerId !== undefined && (
        <form method="post" action="/keys" class="inline">
          <CsrfField token={page.csrf} />
          <label for="label">Label</label>
          <input id="label" name="label" maxLength={100} placeholder="production web server" />
          <button type="submit">Create a key</button>
        </form>
      )}
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
                <KeyActions apiKey={apiKey} csrf={page.csrf} />
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </Layout>
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
