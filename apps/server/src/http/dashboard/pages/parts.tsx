import { cloneElement, Fragment, isValidElement, toChildArray, type ComponentChildren } from 'preact';
import { forecastText, type BudgetForecast } from '../../../domain/budget-forecast.js';
import { formatMoneyWithCode, subtractMicros, type Micros } from '../../../domain/money.js';
import {
  FieldMessage,
  fieldIdOf,
  invalidAttributes,
  ProblemSummary,
  wordProblems,
  type Labels,
} from './form-problems.js';
import { whenIn } from './format.js';
import { CsrfField, Layout, type PageContext, type Refused } from './layout.js';

/** Where a list's page sits in the whole list, and the links to its neighbours (`paging.ts`). */
export interface Paging {
  /** The rows shown, counted from 1 (0 and 0 on a page past the end). */
  from: number;
  to: number;
  total: number;
  number: number;
  last: number;
  first?: string;
  previous?: string;
  next?: string;
  lastHref?: string;
}

const count = (n: number): string => n.toLocaleString('en-US');

const capitalised = (words: string): string => words.charAt(0).toUpperCase() + words.slice(1);

/** A column header that sorts the list: a link to the list sorted by it, and how it is sorted now. */
export interface SortHeader {
  text: string;
  href: string;
  sorted?: 'ascending' | 'descending';
}

/** What a `DataTable` shows: its rows (`children`) under `headers`, named and counted. */
interface DataTableProps {
  label: string;
  count: number;
  /** The caption's words for one and for many items: `['One key', 'keys']`. */
  noun: [string, string];
  empty: ComponentChildren;
  headers: Array<string | SortHeader | false>;
  /** Each header's class, by its place in `headers`: `money` for a column of amounts, aligned with them. */
  headerClasses?: ReadonlyArray<string | undefined>;
  paging?: Paging;
  children: ComponentChildren;
}

/**
 * A list as a table, or what to do next when it is empty. On a phone's narrow screen each row
 * stands as a card of its cells, each cell under its column's name (`data-label`, which the
 * stylesheet shows), so no column (the actions least of all) is off the screen; the frame still
 * scrolls sideways if a cell is too wide, and takes focus so keyboard users can scroll it too.
 * `headers` left false are columns this person does not get. A list read one page at a time passes
 * `paging`: the caption then says which rows of how many, and the pager follows.
 */
export function DataTable(props: DataTableProps) {
  const { paging } = props;
  if (paging && paging.total > 0 && props.count === 0) {
    return (
      <>
        <p class="empty">
          Page {paging.number} is past the end of the list ({count(paging.total)} {props.noun[1]}).
        </p>
        <PageLinks paging={paging} label={props.label} />
      </>
    );
  }
  if (props.count === 0) return <p class="empty">{props.empty}</p>;
  const columns = props.headers
    .filter((header) => header !== false)
    .map((header) => (typeof header === 'string' ? header : header.text));
  // One row in all reads "1 key", not "1–1 of 1 keys".
  const caption =
    paging && paging.total > 1
      ? `${count(paging.from)}–${count(paging.to)} of ${count(paging.total)} ${props.noun[1]}`
      : props.count === 1
        ? props.noun[0]
        : `${props.count} ${props.noun[1]}`;
  return (
    <>
      <div class="table-wrap cards-on-phone" tabIndex={0} role="region" aria-label={props.label}>
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {props.headers.map(
                (header, index) =>
                  header !== false &&
                  (typeof header === 'string' ? (
                    <th scope="col" class={props.headerClasses?.[index]}>
                      {header}
                    </th>
                  ) : (
                    <th scope="col" class={props.headerClasses?.[index]} aria-sort={header.sorted}>
                      <a href={header.href}>
                        {header.text}
                        {header.sorted && (
                          <span aria-hidden="true">{header.sorted === 'ascending' ? ' ▲' : ' ▼'}</span>
                        )}
                      </a>
                    </th>
                  )),
              )}
            </tr>
          </thead>
          <tbody>{labelled(props.children, columns)}</tbody>
        </table>
      </div>
      {paging && <PageLinks paging={paging} label={props.label} />}
    </>
  );
}

/** A column of a `ListTable`: its header, and what its cell shows for each row. */
export interface Column<Row> {
  header: string | SortHeader;
  cell: (row: Row) => ComponentChildren;
  /** The cells' and header's class: `money` right-aligns amounts in digits of one width (dashboard.css). */
  class?: 'money';
}

/**
 * A `DataTable` of `rows` from the definitions of its columns: a row each, a cell per column. A
 * column left `false` is one this person does not get. The table is named by its noun for many,
 * capitalised ("Advertisers"), unless given a `label`.
 */
export function ListTable<Row>(
  props: Omit<DataTableProps, 'label' | 'count' | 'headers' | 'children'> & {
    label?: string;
    rows: readonly Row[];
    columns: Array<Column<Row> | false>;
  },
) {
  const { rows, columns, noun, label = capitalised(noun[1]), ...table } = props;
  const shown = columns.filter((column) => column !== false);
  return (
    <DataTable
      {...table}
      label={label}
      noun={noun}
      count={rows.length}
      headers={shown.map((column) => column.header)}
      headerClasses={shown.map((column) => column.class)}
    >
      {rows.map((row) => (
        <tr>
          {shown.map((column) => (
            <td {...(column.class && { class: column.class })}>{column.cell(row)}</td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}

/** Each row's cells with the name of their column, in order, for the stacked rows on a phone. */
function labelled(rows: ComponentChildren, columns: string[]): ComponentChildren {
  return toChildArray(rows).map((row) => {
    if (!isValidElement(row)) return row;
    const cells = toChildArray((row.props as { children?: ComponentChildren }).children).map((cell, i) =>
      isValidElement(cell) && columns[i] !== undefined
        ? cloneElement(cell, { 'data-label': columns[i] })
        : cell,
    );
    return cloneElement(row, {}, ...cells);
  });
}

/** A paged list that is not a table (cards): which items of how many, the items, then the pager. */
export function PagedList(props: {
  label: string;
  noun: string;
  paging: Paging;
  children: ComponentChildren;
}) {
  const { paging } = props;
  return (
    <>
      <p class="note">
        {count(paging.from)}–{count(paging.to)} of {count(paging.total)} {props.noun}
      </p>
      {props.children}
      <PageLinks paging={paging} label={props.label} />
    </>
  );
}

/** First, previous, next and last page links under a paged list; a link that goes nowhere is left out. */
function PageLinks(props: { paging: Paging; label: string }) {
  const { paging } = props;
  if (paging.last <= 1 && paging.number === 1) return null;
  return (
    <nav class="pager" aria-label={`Pages of ${props.label.toLowerCase()}`}>
      {paging.first !== undefined && <a href={paging.first}>First page</a>}
      {paging.previous !== undefined && (
        <a href={paging.previous} rel="prev">
          Previous page
        </a>
      )}
      <span aria-current="page">
        Page {count(paging.number)} of {count(paging.last)}
      </span>
      {paging.next !== undefined && (
        <a href={paging.next} rel="next">
          Next page
        </a>
      )}
      {paging.lastHref !== undefined && <a href={paging.lastHref}>Last page</a>}
    </nav>
  );
}

/**
 * A secret shown once (a new key, an invitation link), with a copy button where scripts run;
 * `wrapped`, it wraps onto as many lines as it takes, so a narrow screen shows all of it.
 */
export function SecretField(props: { id: string; label: string; value: string; wrapped?: boolean }) {
  return (
    <>
      <div class="secret">
        <label for={props.id}>{props.label}</label>
        {props.wrapped ? (
          <textarea id={props.id} readonly rows={2} class="mono" value={props.value} />
        ) : (
          <input id={props.id} readonly value={props.value} class="mono" />
        )}
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
  /** Values the button sends (what it sets), as hidden fields. */
  sends?: Readonly<Record<string, string>>;
}) {
  return (
    <form method="post" action={props.action}>
      <CsrfField token={props.csrf} />
      {Object.entries(props.sends ?? {}).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.look} aria-label={props.label}>
        {props.text}
      </button>
    </form>
  );
}

/**
 * A form of one text field and its button, for a row of a list (a reason, a new name); refused,
 * it keeps what was typed, is marked invalid and says why beside the field.
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
  const { refused } = props;
  const id = fieldIdOf(props.action, props.name);
  let message: string | undefined;
  if (refused?.action === props.action) {
    const worded = wordProblems(refused.problem, refused.problems);
    message = worded.fields.get(props.name) ?? [...worded.fields.values(), ...worded.others].join(' ');
  }
  return (
    <form method="post" action={props.action} class="field-form">
      <CsrfField token={props.csrf} />
      <input
        id={id}
        name={props.name}
        aria-label={props.label}
        value={typed(refused, props.action, props.name, props.value)}
        placeholder={props.placeholder}
        required={props.required}
        maxLength={props.maxLength}
        {...invalidAttributes(id, message)}
      />
      <button type="submit" class={props.danger ? 'danger' : undefined} aria-label={props.buttonLabel}>
        {props.button}
      </button>
      <FieldMessage fieldId={id} message={message} />
    </form>
  );
}

/** A text field of an `InlineForm`. */
export interface InlineField {
  name: string;
  label: string;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
  /** What the field holds before anything is typed (the value in force). */
  value?: string;
}

/**
 * A form of a few labelled text fields on one line, wrapping on a narrow screen (to create a
 * partner, a placement…); refused, it keeps what was typed and says beside each field what is
 * wrong with it.
 */
export function InlineForm(props: {
  action: string;
  csrf: string;
  fields: InlineField[];
  button: string;
  refused: Refused | undefined;
}) {
  const { refused } = props;
  const worded =
    refused?.action === props.action
      ? wordProblems(refused.problem, refused.problems, labelsOf(props.fields))
      : undefined;
  return (
    <form method="post" action={props.action} class="inline">
      <CsrfField token={props.csrf} />
      {props.fields.map((field) => {
        const message = worded?.fields.get(field.name);
        return (
          <Fragment key={field.name}>
            <span class="field">
              <label for={field.name}>{field.label}</label>
              <input
                id={field.name}
                name={field.name}
                required={field.required}
                maxLength={field.maxLength}
                placeholder={field.placeholder}
                value={typed(refused, props.action, field.name, field.value)}
                {...invalidAttributes(field.name, message)}
              />
              <FieldMessage fieldId={field.name} message={message} />
            </span>
          </Fragment>
        );
      })}
      <button type="submit">{props.button}</button>
    </form>
  );
}

const labelsOf = (fields: InlineField[]): Labels =>
  Object.fromEntries(fields.map((field) => [field.name, field.label]));

/** The form at the top of a list page that creates an item in it: its fields and its button's words. */
export interface CreateForm {
  fields: InlineField[];
  button: string;
}

/** What every list page with forms is given: who is signed in, what they may do, a form just refused. */
export interface FormsPageProps {
  page: PageContext;
  /** Whether this person may use the page's forms (a reporter only reads). */
  canChange: boolean;
  refused?: Refused | undefined;
}

/** What a paged list page with forms is given: the above, and where its page sits in the list. */
export interface ListPageProps extends FormsPageProps {
  paging: Paging;
}

/**
 * The frame of a list page with forms at `path`: when a form was refused, a summary of its problems
 * linking to the fields, then the form that creates an item there (for those who may change
 * things), then the list.
 */
export function FormsPage(props: {
  title: string;
  path: string;
  of: FormsPageProps;
  create?: CreateForm | false;
  /** The labels of the fields of the forms in the list's rows, for the summary of a refused one. */
  rowLabels?: Labels;
  children: ComponentChildren;
}) {
  const { page, refused, canChange } = props.of;
  return (
    <Layout title={props.title} page={page} current={props.path}>
      {refused && (
        <ProblemSummary
          worded={wordProblems(refused.problem, refused.problems, {
            ...props.rowLabels,
            ...(props.create ? labelsOf(props.create.fields) : {}),
          })}
          idOf={(name) => (refused.action === props.path ? name : fieldIdOf(refused.action, name))}
        />
      )}
      {canChange && props.create && (
        <InlineForm action={props.path} csrf={page.csrf} refused={refused} {...props.create} />
      )}
      {props.children}
    </Layout>
  );
}

/**
 * One budget of a budget table: its amount (null: none), what was spent against it (null: not
 * shown) and when it runs out at the current pace (`forecast`, null: nothing to say).
 */
export interface BudgetRow {
  label: string;
  budget: Micros | null;
  spent: Micros | null;
  forecast: BudgetForecast;
}

/**
 * Budgets, the spend against each and when each runs out at the current pace (D18), amounts
 * right-aligned in tabular figures: a campaign's, an advertiser's, instants in `timeZone` (the
 * campaign's, or the billing time zone). In a region of its own that scrolls sideways on a narrow
 * screen.
 */
export function BudgetTable(props: {
  label: string;
  currency: string;
  timeZone: string;
  rows: readonly BudgetRow[];
}) {
  const { currency, timeZone } = props;
  const money = (amount: Micros | null) => (amount === null ? 'none' : formatMoneyWithCode(amount, currency));
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.label}>
      <table>
        <thead>
          <tr>
            <th scope="col">Budget</th>
            <th scope="col" class="money">
              Amount
            </th>
            <th scope="col" class="money">
              Spent
            </th>
            <th scope="col" class="money">
              Left
            </th>
            <th scope="col" class="when">
              Runs out at the current pace
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ label, budget, spent, forecast }) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td class="money">{money(budget)}</td>
              <td class="money">{spent === null ? '' : formatMoneyWithCode(spent, currency)}</td>
              <td class="money">
                {budget === null || spent === null ? '' : money(subtractMicros(budget, spent))}
              </td>
              <td class="when">{forecastText(forecast, (at) => whenIn(at, timeZone))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
