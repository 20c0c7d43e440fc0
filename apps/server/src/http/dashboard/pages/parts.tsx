import { Fragment, type ComponentChildren } from 'preact';
import { CsrfField, Layout, Problem, type PageContext, type Refused } from './layout.js';

/**
 * A list as a table, or what to do next when it is empty. The table scrolls sideways inside its
 * frame on a narrow screen rather than the page, and the frame takes focus so keyboard users can
 * scroll it too. `headers` left false are columns this person does not get.
 */
export function DataTable(props: {
  label: string;
  count: number;
  /** The caption's words for one and for many items: `['One key', 'keys']`. */
  noun: [string, string];
  empty: ComponentChildren;
  headers: Array<string | false>;
  children: ComponentChildren;
}) {
  if (props.count === 0) return <p class="empty">{props.empty}</p>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.label}>
      <table>
        <caption>{props.count === 1 ? props.noun[0] : `${props.count} ${props.noun[1]}`}</caption>
        <thead>
          <tr>{props.headers.map((header) => header !== false && <th scope="col">{header}</th>)}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A secret shown once (a new key, an invitation link), with a copy button where scripts run. */
export function SecretField(props: { id: string; label: string; value: string }) {
  return (
    <>
      <div class="secret">
        <label for={props.id}>{props.label}</label>
        <input id={props.id} readonly value={props.value} class="mono" />
        <button type="button" id="copy-key" data-copy={props.id} hidden>
          Copy
        </button>
        <span id="copy-status" role="status"></span>
      </div>
      <script src="/assets/copy.js" defer></script>
    </>
  );
}

/** What a field of the form posted to `action` shows: as typed when that form was just refused. */
export function typed(refused: Refused | undefined, action: string, name: string, value = ''): string {
  return refused?.action === action ? (refused.fields[name] ?? '') : value;
}

/** A form that is one button (enable, reinstate, revoke…); `label` names the object for screen readers. */
export function ButtonForm(props: {
  action: string;
  csrf: string;
  text: string;
  label: string;
  /** `danger` for what cannot be undone or stops service; `secondary` beside a main action. */
  look?: 'danger' | 'secondary';
}) {
  return (
    <form method="post" action={props.action}>
      <CsrfField token={props.csrf} />
      <button type="submit" class={props.look} aria-label={props.label}>
        {props.text}
      </button>
    </form>
  );
}

/**
 * A form of one text field and its button, for a row of a list (a reason, a new name); refused,
 * it keeps what was typed and is marked invalid.
 */
export function FieldForm(props: {
  action: string;
  csrf: string;
  name: string;
  /** The field's accessible name, which also names the object: "New name of Acme". */
  label: string;
  value?: string;
  placeholder?: string;
  required?: boolean;
  maxLength?: number;
  button: string;
  /** The button's accessible name when its text alone does not say which object: "Suspend key plc_ab…". */
  buttonLabel?: string;
  danger?: boolean;
  refused: Refused | undefined;
}) {
  const invalid = props.refused?.action === props.action;
  return (
    <form method="post" action={props.action} class="field-form">
      <CsrfField token={props.csrf} />
      <input
        name={props.name}
        aria-label={props.label}
        value={typed(props.refused, props.action, props.name, props.value)}
        placeholder={props.placeholder}
        required={props.required}
        maxLength={props.maxLength}
        aria-invalid={invalid ? 'true' : undefined}
      />
      <button type="submit" class={props.danger ? 'danger' : undefined} aria-label={props.buttonLabel}>
        {props.button}
      </button>
    </form>
  );
}

/** Links to the start of a long list and to its next page, where there is one. */
export function Pager(props: {
  newer: string | undefined;
  older: string | undefined;
  /** The links' words: back to the start, and on. */
  labels: [string, string];
}) {
  if (props.newer === undefined && props.older === undefined) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.newer !== undefined && <a href={props.newer}>{props.labels[0]}</a>}
      {props.older !== undefined && <a href={props.older}>{props.labels[1]}</a>}
    </nav>
  );
}

/** A text field of an `InlineForm`. */
export interface InlineField {
  name: string;
  label: string;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
}

/**
 * A form of a few labelled text fields on one line, wrapping on a narrow screen (to create a
 * partner, a placement…); refused, it keeps what was typed.
 */
export function InlineForm(props: {
  action: string;
  csrf: string;
  fields: InlineField[];
  button: string;
  refused: Refused | undefined;
}) {
  return (
    <form method="post" action={props.action} class="inline">
      <CsrfField token={props.csrf} />
      {props.fields.map((field) => (
        <Fragment key={field.name}>
          <label for={field.name}>{field.label}</label>
          <input
            id={field.name}
            name={field.name}
            required={field.required}
            maxLength={field.maxLength}
            placeholder={field.placeholder}
            value={typed(props.refused, props.action, field.name)}
          />
        </Fragment>
      ))}
      <button type="submit">{props.button}</button>
    </form>
  );
}

/** What every list page with forms is given: who is signed in, what they may do, a form just refused. */
export interface FormsPageProps {
  page: PageContext;
  /** Whether this person may use the page's forms (a reporter only reads). */
  canChange: boolean;
  refused?: Refused | undefined;
}

/**
 * The frame of a list page with forms at `path`: the service's message when a form was refused,
 * the form that creates an item there (for those who may change things), then the list.
 */
export function FormsPage(props: {
  title: string;
  path: string;
  of: FormsPageProps;
  create?: { fields: InlineField[]; button: string } | false;
  children: ComponentChildren;
}) {
  const { page, refused, canChange } = props.of;
  return (
    <Layout title={props.title} page={page} current={props.path}>
      <Problem message={refused?.problem} />
      {canChange && props.create && (
        <InlineForm action={props.path} csrf={page.csrf} refused={refused} {...props.create} />
      )}
      {props.children}
    </Layout>
  );
}
