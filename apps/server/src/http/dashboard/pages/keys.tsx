import { formatMoneyWithCode } from '../../../domain/money.js';
import type { MonthEarnings } from '../../../services/money-summary.js';
import { monthName } from './money.js';
import type { keyView } from '../../../services/partners.js';
import { Fragment } from 'preact';
import { CsrfField, Layout, type PageContext, type Refused } from './layout.js';
import {
  ButtonForm,
  FieldForm,
  FormsPage,
  ListTable,
  SecretField,
  typed,
  type ListPageProps,
} from './parts.js';
import { when } from './format.js';
import { FieldMessage, fieldIdOf, invalidAttributes, wordProblems } from './form-problems.js';
import { DEFAULT_POLICIES, MAX_LIMIT_SETTING, type KeyLimitSettings } from '../../../domain/rate-limits.js';

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
      {/* Revoking cannot be undone: the button opens a page that says what happens and asks first. */}
      <a class="button danger" href={`/keys/${apiKey.id}/revoke`} aria-label={`Revoke ${key}`}>
        Revoke
      </a>
      {operator && <LimitsForm apiKey={apiKey} csrf={csrf} refused={refused} />}
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

/** The four limits of a key (D7), as the form names them, with the default each falls back to. */
const LIMIT_FIELDS: ReadonlyArray<{ name: keyof KeyLimitSettings; label: string; fallback: number }> = [
  { name: 'fetchRate', label: 'Fetches per second', fallback: DEFAULT_POLICIES.fetch.perSecond },
  { name: 'fetchBurst', label: 'Fetch burst', fallback: DEFAULT_POLICIES.fetch.burst },
  { name: 'eventsRate', label: 'Events per second', fallback: DEFAULT_POLICIES.events.perSecond },
  { name: 'eventsBurst', label: 'Event burst', fallback: DEFAULT_POLICIES.events.burst },
];

/** The limits' labels by field name, for the problems of a refused form. */
const LIMIT_LABELS: Readonly<Record<string, string>> = Object.fromEntries(
  LIMIT_FIELDS.map((field) => [field.name, field.label]),
);

/** A key's limits in a few words: its own where set, the defaults otherwise. */
export function limitsInWords(limits: KeyLimitSettings): string {
  const fetch = `${limits.fetchRate ?? DEFAULT_POLICIES.fetch.perSecond}/s, burst ${limits.fetchBurst ?? DEFAULT_POLICIES.fetch.burst}`;
  const events = `${limits.eventsRate ?? DEFAULT_POLICIES.events.perSecond}/s, burst ${limits.eventsBurst ?? DEFAULT_POLICIES.events.burst}`;
  const own = Object.values(limits).some((value) => value !== null);
  return `fetch ${fetch}; events ${events}${own ? '' : ' (defaults)'}`;
}

/**
 * The operator's form for a key's rate limits (D7), folded away until opened: each field blank
 * puts that limit back to its default. Refused, it opens again with the fields as typed.
 */
function LimitsForm(props: { apiKey: KeyRow; csrf: string; refused: Refused | undefined }) {
  const { apiKey, refused } = props;
  const action = `/keys/${apiKey.id}/rate-limits`;
  const current = (name: keyof KeyLimitSettings) => {
    const value = apiKey.rateLimits[name];
    return value === null ? '' : String(value);
  };
  const worded =
    refused?.action === action ? wordProblems(refused.problem, refused.problems, LIMIT_LABELS) : undefined;
  return (
    <details class="limits" open={refused?.action === action}>
      <summary aria-label={`Rate limits of key ${apiKey.prefix}`}>Rate limits</summary>
      <form method="post" action={action} class="stack">
        <CsrfField token={props.csrf} />
        {LIMIT_FIELDS.map((field) => {
          const id = fieldIdOf(action, field.name);
          const message = worded?.fields.get(field.name);
          return (
            <Fragment key={field.name}>
              <label for={id}>{field.label}</label>
              <input
                id={id}
                name={field.name}
                type="number"
                min={1}
                max={MAX_LIMIT_SETTING}
                placeholder={`default ${field.fallback}`}
                value={typed(refused, action, field.name, current(field.name))}
                {...invalidAttributes(id, message)}
              />
              <FieldMessage fieldId={id} message={message} />
            </Fragment>
          );
        })}
        <p class="hint">Blank: the default. Refused requests are answered 429 with Retry-After.</p>
        <button type="submit" aria-label={`Save limits of key ${apiKey.prefix}`}>
          Save limits
        </button>
      </form>
    </details>
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

/** A partner's earnings this month and last, and where its revenue share history is. */
function PartnerEarnings(props: { earnings: MonthEarnings[]; partnerId: number }) {
  return (
    <section aria-labelledby="earnings-title">
      <h2 class="section-title" id="earnings-title">
        Your earnings
      </h2>
      <dl class="totals">
        {props.earnings.map((month) => (
          <div key={month.month}>
            <dt>
              {monthName(month.month)}
              {month.live && ' (so far)'}
            </dt>
            <dd class="money" data-earnings={month.month}>
              {formatMoneyWithCode(month.earningsMicros, month.currency)}
            </dd>
          </div>
        ))}
      </dl>
      <p class="note">
        Your revenue share of what advertisers spent on your billable traffic, by month of the billing time
        zone. <a href={`/partners/${props.partnerId}/revenue-shares`}>Your revenue share history</a> ·{' '}
        <a href="/reports">Reports</a>
      </p>
    </section>
  );
}

export function KeysPage(
  props: ListPageProps & {
    keys: KeyRow[];
    /** The partner whose keys these are (a partner's people), or undefined for the operator. */
    partnerId: number | undefined;
    /** Why the partner's people may not create a key now (one of its keys is suspended). */
    creationHold?: string | undefined;
    /** A partner's earnings this month and last (billing time zone), newest first. */
    earnings?: MonthEarnings[];
  },
) {
  const { keys, page, refused } = props;
  const operator = props.partnerId === undefined;
  return (
    <FormsPage
      title="API keys"
      path="/keys"
      of={props}
      rowLabels={LIMIT_LABELS}
      create={
        props.partnerId !== undefined &&
        props.creationHold === undefined && {
          fields: [{ name: 'label', label: 'Label', maxLength: 100, placeholder: 'production web server' }],
          button: 'Create a key',
        }
      }
    >
      {props.earnings && props.partnerId !== undefined && (
        <PartnerEarnings earnings={props.earnings} partnerId={props.partnerId} />
      )}
      {props.canChange && props.creationHold !== undefined && (
        <p class="note warning">New keys: {props.creationHold}.</p>
      )}
      <ListTable
        label="API keys"
        noun={['One key', 'keys']}
        rows={keys}
        paging={props.paging}
        empty={
          props.partnerId !== undefined
            ? 'No API keys yet. Create one above: your server sends it with every request to the delivery API.'
            : 'No API keys yet. A partner creates its keys after signing in, or an operator creates one with placard keys create.'
        }
        columns={[
          { header: 'Key', cell: (apiKey) => <code>{apiKey.prefix}…</code> },
          operator && { header: 'Partner', cell: (apiKey) => apiKey.partnerName },
          { header: 'Label', cell: (apiKey) => apiKey.label ?? '—' },
          { header: 'Status', cell: (apiKey) => <Status apiKey={apiKey} /> },
          operator && { header: 'Rate limits', cell: (apiKey) => limitsInWords(apiKey.rateLimits) },
          { header: 'Created', cell: (apiKey) => when(apiKey.createdAt) },
          { header: 'Last used', cell: (apiKey) => when(apiKey.lastUsedAt) },
          props.canChange && {
            header: 'Actions',
            cell: (apiKey) => (
              <KeyActions apiKey={apiKey} csrf={page.csrf} operator={operator} refused={refused} />
            ),
          },
        ]}
      />
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
