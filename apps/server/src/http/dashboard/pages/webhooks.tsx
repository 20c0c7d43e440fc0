import type { WebhookEndpointView } from '../../../services/webhooks.js';
import { when, whenToTheSecond } from './format.js';
import {
  ButtonForm,
  DataTable,
  FormsPage,
  SecretField,
  type CreateForm,
  type FormsPageProps,
} from './parts.js';
import { Layout, type PageContext } from './layout.js';

const CREATE: CreateForm = {
  fields: [
    {
      name: 'url',
      label: 'URL',
      required: true,
      maxLength: 2000,
      placeholder: 'https://hooks.example.com/placard',
    },
    {
      name: 'eventTypes',
      label: 'Events',
      required: true,
      maxLength: 1000,
      placeholder: '*',
    },
    { name: 'description', label: 'Description', maxLength: 500 },
  ],
  button: 'Add the endpoint',
};

const iso = (text: string | null): number | null => (text === null ? null : Date.parse(text));

/** An endpoint's state in words: delivering, failing since when and until when it waits, or why disabled. */
function state(endpoint: WebhookEndpointView): string {
  if (!endpoint.enabled)
    return `Disabled ${when(iso(endpoint.disabledAt))}: ${endpoint.disabledReason ?? ''}`;
  if (endpoint.failures > 0)
    return `Failing since ${when(iso(endpoint.failingSince))} (${endpoint.failures} in a row); next try ${when(iso(endpoint.nextAttemptAt))}`;
  return 'Delivering';
}

/**
 * Webhook endpoints (D19): the account's own (the operator's people see every account's), each
 * with its state, and for the account's admins and managers the form that adds one and the buttons
 * that test, disable or enable one and rotate its secret.
 */
export function WebhooksPage(
  props: FormsPageProps & {
    endpoints: WebhookEndpointView[];
    operator: boolean;
    eventTypes: readonly string[];
  },
) {
  const { endpoints, canChange, operator, page } = props;
  return (
    <FormsPage title="Webhooks" path="/webhooks" of={props} create={CREATE}>
      <p class="hint">
        Placard sends a signed POST to each endpoint when something it takes happens, in order, retried for
        three days: see the webhooks guide (<code>docs/webhooks.md</code> in Placard&apos;s source) and the
        Webhooks section of <a href="/docs">the API reference</a>. The URL must use https. Events,
        comma-separated, or * for all of these: {props.eventTypes.join(', ')}.
      </p>
      <DataTable
        label="Webhook endpoints"
        count={endpoints.length}
        noun={['One endpoint', 'endpoints']}
        empty={
          canChange
            ? 'No endpoint yet. Add one above: its https URL and the events it takes (* for all); its secret is shown once.'
            : 'No endpoint yet. Your account’s admins and managers add them.'
        }
        headers={['URL', operator && 'Account', 'Events', 'State', 'Deliveries', canChange && 'Actions']}
      >
        {endpoints.map((endpoint) => (
          <tr key={endpoint.id}>
            <td data-label="URL">
              <code>{endpoint.url}</code>
              {endpoint.description !== '' && <div class="hint">{endpoint.description}</div>}
            </td>
            {operator && <td data-label="Account">{endpoint.account}</td>}
            <td data-label="Events">{endpoint.eventTypes.join(', ')}</td>
            <td data-label="State">{state(endpoint)}</td>
            <td data-label="Deliveries">
              <a href={`/webhooks/${endpoint.id}`} aria-label={`Messages and attempts of ${endpoint.url}`}>
                Messages and attempts
              </a>
            </td>
            {canChange && (
              <td data-label="Actions">
                <div class="actions">
                  <ButtonForm
                    action={`/webhooks/${endpoint.id}/test`}
                    csrf={page.csrf}
                    text="Send a test"
                    label={`Send a test to ${endpoint.url}`}
                    look="secondary"
                  />
                  <ButtonForm
                    action={`/webhooks/${endpoint.id}/rotate-secret`}
                    csrf={page.csrf}
                    text="Rotate secret"
                    label={`Rotate secret of ${endpoint.url}`}
                    look="secondary"
                  />
                  {endpoint.enabled ? (
                    <ButtonForm
                      action={`/webhooks/${endpoint.id}/disable`}
                      csrf={page.csrf}
                      text="Disable"
                      label={`Disable ${endpoint.url}`}
                      look="danger"
                    />
                  ) : (
                    <ButtonForm
                      action={`/webhooks/${endpoint.id}/enable`}
                      csrf={page.csrf}
                      text="Enable"
                      label={`Enable ${endpoint.url}`}
                    />
                  )}
                </div>
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </FormsPage>
  );
}

/** One attempt in a line: when, the answer or the error, how long. */
const attemptLine = (attempt: {
  at: string | null;
  status: number | null;
  durationMs: number;
  error: string | null;
  answer: string;
}) =>
  `${whenToTheSecond(iso(attempt.at))}: ${attempt.status === null ? (attempt.error ?? 'no answer') : `answered ${attempt.status}`}, ${attempt.durationMs} ms${attempt.answer === '' ? '' : `: ${attempt.answer.slice(0, 120)}`}`;

export interface DeliveryRow {
  id: number;
  webhookId: string;
  eventType: string;
  createdAt: string | null;
  deliveredAt: string | null;
  attemptLog: Array<{
    id: number;
    at: string | null;
    status: number | null;
    durationMs: number;
    error: string | null;
    answer: string;
  }>;
}

/** One endpoint's messages, newest first, each with every attempt, and a replay button. */
export function WebhookDeliveriesPage(props: {
  page: PageContext;
  endpoint: WebhookEndpointView;
  messages: DeliveryRow[];
  canChange: boolean;
}) {
  const { endpoint, messages, page } = props;
  return (
    <Layout title={`Deliveries of endpoint ${endpoint.id}`} page={page} current="/webhooks">
      <p class="ad-url">
        To <code>{endpoint.url}</code>
      </p>
      <p>
        {state(endpoint)}. The newest 50 messages; each is sent with the same <code>webhook-id</code> on every
        attempt. <a href="/webhooks">Back to the endpoints</a>
      </p>
      <DataTable
        label={`Messages to ${endpoint.url}`}
        count={messages.length}
        noun={['One message', 'messages']}
        empty="Nothing sent yet. Send a test from the endpoints page, or wait for an event it takes."
        headers={['Event', 'Written', 'Delivered', 'Attempts', props.canChange && 'Replay']}
      >
        {messages.map((message) => (
          <tr key={message.id}>
            <td data-label="Event">
              {message.eventType}
              <div class="hint mono">{message.webhookId}</div>
            </td>
            <td data-label="Written">{whenToTheSecond(iso(message.createdAt))}</td>
            <td data-label="Delivered">
              {message.deliveredAt === null ? 'not yet' : whenToTheSecond(iso(message.deliveredAt))}
            </td>
            <td data-label="Attempts">
              {message.attemptLog.length === 0 ? (
                'none yet'
              ) : (
                <ol>
                  {message.attemptLog.map((attempt) => (
                    <li key={attempt.id}>{attemptLine(attempt)}</li>
                  ))}
                </ol>
              )}
            </td>
            {props.canChange && (
              <td data-label="Replay">
                <ButtonForm
                  action={`/webhooks/${endpoint.id}/messages/${message.id}/replay`}
                  csrf={page.csrf}
                  text="Replay"
                  label={`Replay ${message.eventType} ${message.webhookId}`}
                  look="secondary"
                />
              </td>
            )}
          </tr>
        ))}
      </DataTable>
    </Layout>
  );
}

/**
 * A new or rotated endpoint secret, shown this once; when it was shown already (the page reloaded),
 * what to do instead.
 */
export function NewWebhookSecretPage(props: {
  page: PageContext;
  endpoint: WebhookEndpointView;
  secret: string | undefined;
  rotated: boolean;
}) {
  if (props.secret === undefined)
    return (
      <Layout title="The endpoint’s secret" page={props.page} current="/webhooks">
        <p>
          The secret of <code>{props.endpoint.url}</code> was shown once and is not shown again. If it was not
          stored, rotate it on the endpoints page for a new one.
        </p>
        <p>
          <a href="/webhooks">Back to the endpoints</a>
        </p>
      </Layout>
    );
  return (
    <Layout title="The endpoint’s secret" page={props.page} current="/webhooks">
      <p class="ad-url">
        Give this secret to the receiver at <code>{props.endpoint.url}</code>: it verifies every delivery with
        it. <strong>It is shown only this once.</strong>
        {props.rotated &&
          ' For 24 hours deliveries are signed with the previous secret too, so switch the receiver within a day.'}
      </p>
      <SecretField id="new-key" label="Signing secret" value={props.secret} wrapped />
      <p>
        <a href="/webhooks">I have stored it: back to the endpoints</a>
      </p>
    </Layout>
  );
}
